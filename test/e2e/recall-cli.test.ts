import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { collect } from '../helpers/engine.js';
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
    // A new entity recalls automatically unless told otherwise.
    expect(json((await mgpt(['entities', 'create', '--name', 'default1', '--json'], env)).stdout).recall).toBe('auto');
    const none = json((await mgpt(['entities', 'create', '--name', 'none1', '--recall', 'off', '--json'], env)).stdout);
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

const FILLER = ['the weather was grey', 'we spoke of trains and timetables', 'a long walk by the river', 'coffee in the afternoon', 'the garden needs work'];

/** An `auto` entity whose first message (a fact about Margaret) the window has folded away. */
async function folded(name: string): Promise<string> {
  const engine = openEngineSync({ db: env.MGPT_DB, route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model' }) });
  try {
    const { id } = await engine.entities.create({ model: 'mgpt-1-27b', name, recall: 'auto' }, 'local');
    await engine.entities.update(id, { budget_tokens: 300 }, 'local');
    await collect(engine.entities.send(id, { content: 'My sister Margaret moved to Lisbon in 2019 to teach chemistry.' }, 'local'));
    for (let i = 0; i < 30; i++) await collect(engine.entities.send(id, { content: `${FILLER[i % FILLER.length]}, day ${i}` }, 'local'));
    return id;
  } finally {
    await engine.close();
  }
}

describe('what a turn recalled', () => {
  it('send --verbose says which messages and how many tokens; --json carries recalled; nothing recalled says nothing', async () => {
    await folded('margaret');
    const asked = await mgpt(['send', 'margaret', 'Which city is my sister living in these days?', '--json'], env);
    expect(asked.code).toBe(0);
    const recalled = json(asked.stdout).recalled as Array<{ seq: number; role: string; tokens: number }>;
    expect(recalled.map((m) => m.seq)).toContain(1);
    expect(recalled.every((m) => m.tokens > 0 && (m.role === 'user' || m.role === 'assistant'))).toBe(true);

    // A line in view is not recalled again: each ask goes to an entity whose window does not show #1 yet.
    for (const [i, mode] of [[], ['--no-stream']].entries()) {
      await folded(`margaret${i}`);
      const told = await mgpt(['--verbose', 'send', `margaret${i}`, 'Does Margaret still teach chemistry in Lisbon?', ...mode], env);
      expect(told.code).toBe(0);
      const line = /^recalled (\d+) messages? \(([^)]*)\), (\d+) tokens$/m.exec(told.stderr);
      expect(line, told.stderr).not.toBeNull();
      const seqs = line![2]!.split(', ');
      expect(seqs).toContain('#1');
      expect(seqs.every((s) => /^#\d+$/.test(s))).toBe(true);
      expect(Number(line![1])).toBe(seqs.length);
      expect(Number(line![3])).toBeGreaterThan(0);
    }
    // Without --verbose, stderr stays quiet.
    expect((await mgpt(['send', 'margaret', 'Where does Margaret live now?'], env)).stderr).not.toContain('recalled');

    const nothing = await mgpt(['--verbose', 'send', 'margaret', 'Do you enjoy astronomy, telescopes and comets?'], env);
    expect(nothing.stderr).toMatch(/prompt \+ \d+ completion tokens/);
    expect(nothing.stderr).not.toContain('recalled');
    expect(json((await mgpt(['send', 'margaret', 'Are telescopes or comets more fun, in astronomy?', '--json'], env)).stdout).recalled).toBeUndefined();
  });
});

describe('search --any', () => {
  it('finds by any word and by stem where exact search finds nothing; no hits behave as without --any; other sources exit 2', async () => {
    await folded('lisbon');
    expect((await mgpt(['search', 'teaching', 'Margaret', '--entity', 'lisbon', '--role', 'user'], env)).stdout).toBe('');
    const hits = json((await mgpt(['search', '--any', 'teaching', 'Margaret', '--entity', 'lisbon', '--role', 'user', '--json'], env)).stdout).data as Array<{ seq: number; snippet: string; highlights: Array<[number, number]> }>;
    expect(hits[0]!.seq).toBe(1);
    expect(hits[0]!.highlights.map((h) => hits[0]!.snippet.slice(...h))).toEqual(['Margaret']);
    const piped = await mgpt(['search', '--any', 'teaching', 'Margaret', '--entity', 'lisbon', '--role', 'user'], env);
    expect(piped.stdout).toMatch(/^lisbon \S+ #1 user · \S+\n {2}My sister Margaret moved to Lisbon/);

    const without = await mgpt(['search', 'xylophone', 'quasar'], env);
    const withAny = await mgpt(['search', '--any', 'xylophone', 'quasar'], env);
    expect(withAny).toEqual(without);
    expect(withAny).toMatchObject({ code: 1, stdout: '' });
    expect(json((await mgpt(['search', '--any', 'xylophone', '--json'], env)).stdout)).toEqual({ object: 'list', data: [] });

    const logs = await mgpt(['search', '--any', 'chemistry', '--logs'], env);
    expect(logs.code).toBe(2);
    expect(logs.stderr).toMatch(/mode any searches entity transcripts only, not logs/);
    expect(logs.stderr).toMatch(/hint: search universes and logs for exact words \(without --any\)/);
  });
});
