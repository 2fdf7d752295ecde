import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt, mgptBinary, spawnMgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// mgpt rotations, mgpt rotate and mgpt window --at as a person runs them (the echo provider).
const dir = tempDir();
const env = cliEnv(dir);
let id: string;

beforeAll(async () => {
  id = (await mgpt(['entities', 'create', '--name', 'ledger'], env)).stdout.trim();
  expect((await mgpt(['entities', 'update', 'ledger', '--budget', '256'], env)).code).toBe(0);
  for (let i = 1; i <= 12; i++) await mgpt(['send', 'ledger', `entry ${i}: barrels of rum and crates of tea in the hold`], env);
}, 60_000);

describe('mgpt rotations / rotate / window --at', () => {
  it('lists rotations as TSV when piped and as JSON with --json', async () => {
    const json = JSON.parse((await mgpt(['rotations', 'ledger', '--json'], env)).stdout);
    expect(json.rotations.length).toBeGreaterThan(0);
    const r = json.rotations[0];
    expect(Object.keys(r)).toEqual(['id', 'created_at', 'trigger', 'seq', 'from_seq', 'to_seq', 'summary', 'route', 'usage', 'blocks_before', 'blocks_after', 'undone']);
    const tsv = (await mgpt(['rotations', 'ledger'], env)).stdout.trim().split('\n');
    expect(tsv).toHaveLength(json.rotations.length);
    expect(tsv[0].split('\t').slice(2, 4)).toEqual([`turn #${r.seq}`, `${r.from_seq}-${r.to_seq}`]);
  });

  it('window --at gives the prompt of a past turn; bad input is exit 2, a turn from before the records exit 4', async () => {
    const at = JSON.parse((await mgpt(['window', 'ledger', '--at', '5', '--json'], env)).stdout);
    expect(at).toMatchObject({ entity_id: id, seq: 5 });
    expect(at.prompt.at(-1)).toEqual({ role: 'user', content: 'entry 3: barrels of rum and crates of tea in the hold' });
    expect((await mgpt(['window', 'ledger', '--at', '6', '--json'], env)).stdout).toBe(JSON.stringify(at, null, 2) + '\n');
    const bad = await mgpt(['window', 'ledger', '--at', '99'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/at 99 is not a seq of this transcript \(1 to 24\)/);
    // A date-time without a zone would be read in this process's zone (a server elsewhere reads another): refused.
    const zoneless = await mgpt(['window', 'ledger', '--at', '2999-01-01T10:00:00'], env);
    expect(zoneless.code).toBe(2);
    expect(zoneless.stderr).toMatch(/not "2999-01-01T10:00:00"[\s\S]*2026-11-26T10:00:00Z/);
    expect((await mgpt(['window', 'ledger', '--at', 'March 5'], env)).code).toBe(2);
    // A bare date is midnight UTC; a time with an offset is that instant: both name the last turn here.
    for (const date of ['2999-01-01', '2999-01-01T10:00:00+02:00']) {
      expect(JSON.parse((await mgpt(['window', 'ledger', '--at', date, '--json'], env)).stdout).seq).toBe(23);
    }
    // A turn stored before mgpt recorded windows (its record removed, as a database from before has none).
    const db = new Database(env.MGPT_DB);
    db.prepare('DELETE FROM turn_windows WHERE seq = 1').run();
    db.close();
    const old = await mgpt(['window', 'ledger', '--at', '1'], env);
    expect(old.code).toBe(4);
    expect(old.stderr).toMatch(/cannot be rebuilt/);
  });

  it('rotate folds now, --undo takes it back, --resummarize writes the summary again; the real binary says what it did', async () => {
    const folded = await mgptBinary(['rotate', 'ledger'], env);
    expect(folded.code).toBe(0);
    expect(folded.stdout).toMatch(/^folded seqs \d+-\d+ into a summary of \d+ tokens \(echo:mgpt-1-27b\); window now \d+ blocks, \d+ tokens\n$/);
    const undone = JSON.parse((await mgpt(['rotate', 'ledger', '--undo', '--json'], env)).stdout);
    expect(undone).toMatchObject({ action: 'undo', rotation: { trigger: 'manual', undone: true } });
    const again = await mgpt(['rotate', 'ledger', '--resummarize'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^summary of seqs \d+-\d+ written again by echo:mgpt-1-27b/);
    const rotations = JSON.parse((await mgpt(['rotations', 'ledger', '--json'], env)).stdout).rotations;
    expect(rotations.map((r: { trigger: string; undone: boolean }) => `${r.trigger}${r.undone ? ' undone' : ''}`).slice(-2)).toEqual(['manual undone', 'resummarize']);
  });

  it('refuses contradictory flags with exit 2 and changes nothing', async () => {
    const before = (await mgpt(['rotations', 'ledger', '--json'], env)).stdout;
    for (const args of [['--undo', '--resummarize'], ['--model', 'x'], ['--undo', '--model', 'x']]) {
      const r = await mgpt(['rotate', 'ledger', ...args], env);
      expect(r.code, args.join(' ')).toBe(2);
    }
    expect((await mgpt(['rotations', 'ledger', '--json'], env)).stdout).toBe(before);
  });

  const BAD_MODELS = [['a 10 KB name', 'm'.repeat(10_000)], ['a path', '../../v1/keys'], ['a space', 'gpt 4o'], ['an empty part', 'vendor//model']] as const;

  it('rotate --resummarize --model refuses what is not a provider model name: exit 2, nothing stored (local)', async () => {
    const before = (await mgpt(['rotations', 'ledger', '--json'], env)).stdout;
    for (const [what, name] of BAD_MODELS) {
      const r = await mgpt(['rotate', 'ledger', '--resummarize', '--model', name], env);
      expect([r.code, r.stderr.split('\n')[0]], what).toEqual([2, expect.stringMatching(/^error: model ".{1,41}" is not a provider model name: it /)]);
      expect(r.stderr.length, what).toBeLessThan(400);
    }
    expect((await mgpt(['rotations', 'ledger', '--json'], env)).stdout).toBe(before);
    // A name with a vendor part is a model name.
    const ok = await mgpt(['rotate', 'ledger', '--resummarize', '--model', 'meta-llama/Llama-3.1-8B-Instruct', '--json'], env);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).rotation.route).toEqual({ provider: 'echo', model: 'meta-llama/Llama-3.1-8B-Instruct' });
  });

  it('rotate --resummarize --model refuses the same through mgpt serve: 400 on the wire, exit 2 from the remote CLI', async () => {
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0'], env);
    try {
      const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
      const client = cliEnv(`${dir}/client`, { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key, MGPT_DB: `${dir}/client/never.db` });
      const before = (await mgpt(['rotations', id, '--json'], client)).stdout;
      for (const [what, name] of BAD_MODELS) {
        const res = await fetch(`${url}/v1/entities/${id}/rotations`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ action: 'resummarize', model: name }),
        });
        expect(res.status, what).toBe(400);
        expect(((await res.json()) as { error: string }).error).toMatch(/is not a provider model name/);
        const r = await mgpt(['rotate', id, '--resummarize', '--model', name], client);
        expect([r.code, r.stderr.split('\n')[0]], what).toEqual([2, expect.stringMatching(/^error: model ".{1,41}" is not a provider model name: it /)]);
      }
      expect((await mgpt(['rotations', id, '--json'], client)).stdout).toBe(before);
    } finally {
      server.kill('SIGTERM');
      await server.result;
    }
  });
});
