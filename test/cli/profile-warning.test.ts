import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-profile-');

// Issue 37, item 11: a profile that does not exist is a warning on every command, once.
describe('--profile that does not exist', () => {
  it('warns once on stderr outside config commands too, and not where it is being made', async () => {
    const env = cliEnv(join(dir, 'profile'));
    const r = await mgpt(['--profile', 'nosuch', 'entities', 'list', '--json'], env);
    expect([r.code, r.stderr]).toEqual([0, 'warning: profile nosuch does not exist: using the defaults (mgpt --profile nosuch config set KEY VALUE creates it)\n']);
    const fromEnv = await mgpt(['config', 'get', 'backend'], { ...env, MGPT_PROFILE: 'wrok' });
    expect(fromEnv.stderr.match(/warning: profile wrok does not exist/g)).toHaveLength(1);
    const set = await mgpt(['--profile', 'work', 'config', 'set', 'engine.windowBudget', '8000'], env);
    expect([set.code, set.stderr]).toEqual([0, 'set engine.windowBudget in profile work\n']);
    expect((await mgpt(['--profile', 'work', 'entities', 'list'], env)).stderr).toBe('');
  });
});
