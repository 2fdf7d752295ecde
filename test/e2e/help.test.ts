import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-help-');

describe('mgpt --help and --version', () => {
  it('groups the commands as gh does, with examples', async () => {
    const r = await mgpt(['--help'], cliEnv(dir));
    expect(r.code).toBe(0);
    const headings = r.stdout.split('\n').filter((l) => /^[A-Z][A-Za-z]+:$/.test(l));
    expect(headings).toEqual(['Options:', 'Talking:', 'Entities:', 'Universes:', 'Server:', 'Setup:', 'Commands:', 'Examples:']);
    const talking = r.stdout.split('Talking:\n')[1].split('\n\n')[0];
    expect(talking.match(/^ {2}(\w+)/gm)!.map((s) => s.trim())).toEqual(['ask', 'send', 'chat', 'batch']);
  });

  it('-v prints the version as -V and --version do; after a command it is that command\'s (unknown) option', async () => {
    const env = cliEnv(dir);
    const versions = await Promise.all([['-v'], ['-V'], ['--version']].map((a) => mgpt(a, env)));
    expect(new Set(versions.map((v) => `${v.code} ${v.stdout}`))).toEqual(new Set([`0 ${versions[0].stdout}`]));
    expect(versions[0].stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect((await mgpt(['send', '-v'], env)).code).toBe(2);
  });
});
