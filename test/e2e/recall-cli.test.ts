import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

/** Recall on the command line (issue 32): the modes, what a turn recalled, and `search --any`. */
const dir = tempDir();
let fake: FakeOpenAI;
let env: Record<string, string>;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  env = cliEnv(dir, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROVIDER_MODEL: 'fake-model' });
});
afterAll(() => fake.close());

const json = (s: string) => JSON.parse(s) as Record<string, unknown>;

describe('recall modes', () => {
  it('create --recall MODE, a bare --recall is tool, update and --no-recall; show and --json carry the mode', async () => {
    const auto = json((await mgpt(['entities', 'create', '--name', 'auto1', '--recall', 'auto', '--json'], env)).stdout);
    expect(auto.recall).toBe('auto');
    const bare = json((await mgpt(['entities', 'create', '--name', 'bare1', '--recall', '--json'], env)).stdout);
    expect(bare.recall).toBe('tool');
    const none = json((await mgpt(['entities', 'create', '--name', 'none1', '--json'], env)).stdout);
    expect(none.recall).toBeUndefined();

    const shown = await mgpt(['entities', 'show', 'auto1'], env);
    expect(shown.stdout).toMatch(/^recall +auto: earlier messages the window folded away are recalled/m);
    expect((await mgpt(['entities', 'show', 'none1'], env)).stdout).toMatch(/^recall +off$/m);
    expect(json((await mgpt(['entities', 'show', 'auto1', '--json'], env)).stdout).recall).toBe('auto');

    expect(json((await mgpt(['entities', 'update', 'auto1', '--recall', '--json'], env)).stdout).recall).toBe('tool');
    expect(json((await mgpt(['entities', 'update', 'auto1', '--recall', 'auto', '--json'], env)).stdout).recall).toBe('auto');
    expect(json((await mgpt(['entities', 'update', 'auto1', '--recall', 'off', '--json'], env)).stdout).recall).toBeUndefined();
    expect(json((await mgpt(['entities', 'update', 'bare1', '--no-recall', '--json'], env)).stdout).recall).toBeUndefined();
    expect((await mgpt(['entities', 'show', 'bare1'], env)).stdout).toMatch(/^recall +off$/m);
  });

  it('a word that is no mode exits 2 with the modes and a hint, and changes nothing', async () => {
    for (const args of [['entities', 'create', '--name', 'x', '--recall', 'sometimes'], ['entities', 'update', 'bare1', '--recall', 'always']]) {
      const r = await mgpt(args, env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--recall must be auto, tool or off, got "(sometimes|always)"/);
      expect(r.stderr).toMatch(/a bare --recall/);
    }
    // `update --recall NAME`: the name is read as the mode, and refused, not applied to another entity.
    const misplaced = await mgpt(['entities', 'update', '--recall', 'bare1'], env);
    expect(misplaced.code).toBe(2);
    expect((await mgpt(['entities', 'list', '--json'], env)).stdout).not.toContain('"x"');
  });
});
