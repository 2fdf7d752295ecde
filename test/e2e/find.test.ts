import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-find-');

describe('finding entities from the command line', () => {
  it('pages entities list, and takes a unique id prefix or a name anywhere an ENTITY goes', async () => {
    const env = cliEnv(dir);
    const ids: string[] = [];
    for (const name of ['ada', 'bob', 'cy']) ids.push((await mgpt(['entities', 'create', '--name', name], env)).stdout.trim());
    const list = async (...args: string[]) => JSON.parse((await mgpt(['entities', 'list', '--json', ...args], env)).stdout).data.map((e: { name: string }) => e.name);
    expect(await list('--limit', '2')).toEqual(['cy', 'bob']);
    expect(await list('--all')).toEqual(['cy', 'bob', 'ada']);
    const bad = await mgpt(['entities', 'list', '--limit', '0'], env);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--limit must be an integer >= 1')]);
    const sent = await mgpt(['send', ids[0].slice(0, 5), 'by prefix'], env);
    expect([sent.code, sent.stdout]).toEqual([0, 'by prefix\n']);
    expect(JSON.parse((await mgpt(['entities', 'show', 'ada', '--json'], env)).stdout).transcript.messages).toBe(2);
    const piped = (await mgpt(['entities', 'list'], env)).stdout.trim().split('\n');
    expect(piped.map((l) => l.split('\t')[0])).toEqual([ids[0], ids[2], ids[1]]); // scripts get whole ids
    const missing = await mgpt(['send', 'nobody', 'hi'], env);
    expect([missing.code, missing.stderr]).toEqual([4, expect.stringMatching(/^error: no entity "nobody"\nhint: list entities with: mgpt entities list/)]);
  });
});
