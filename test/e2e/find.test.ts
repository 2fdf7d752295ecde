import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/sqlite/migrations.js';
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

describe('mgpt search', () => {
  it('finds a message by word, phrase or prefix, names the entity and seq, and refuses a query with no words', async () => {
    const env = cliEnv(`${dir}/search`);
    await mgpt(['entities', 'create', '--name', 'ada'], env);
    await mgpt(['entities', 'create', '--name', 'bob'], env);
    await mgpt(['send', 'ada', 'The secret word is zanzibar42.'], env);
    await mgpt(['send', 'bob', 'Nothing to see here.'], env);
    const json = JSON.parse((await mgpt(['search', 'zanzibar42', '--role', 'user', '--json'], env)).stdout);
    expect(json.data).toEqual([expect.objectContaining({ entity_name: 'ada', seq: 1, role: 'user', snippet: 'The secret word is zanzibar42.', highlights: [[19, 29]] })]);
    const text = await mgpt(['search', '"secret word"', '--entity', 'ada', '--since', '1h'], env);
    expect(text.stdout).toMatch(/^ada [0-9a-f]{8} #2 assistant · \d{4}-\d\d-\d\dT[^\n]+\n {2}The secret word is zanzibar42\.\n\n/);
    expect((await mgpt(['search', 'zanzi*', '--entity', 'bob'], env)).stdout).toBe('');
    const bad = await mgpt(['search', '"', '*'], env);
    expect([bad.code, bad.stderr]).toEqual([2, 'error: the query has no words to search for\nhint: search for words, "a phrase" or a prefix*\n']);
    await mgpt(['respond', 'A dragon named Quillmoss sleeps.'], env);
    const logs = JSON.parse((await mgpt(['search', 'quillmoss', '--logs', '--json'], env)).stdout).data;
    expect(logs).toEqual([expect.objectContaining({ log_id: expect.any(String), snippet: expect.stringContaining('Quillmoss') })]);
    const both = await mgpt(['search', 'x', '--logs', '--universes'], env);
    expect([both.code, both.stderr]).toEqual([2, 'error: search universes or logs, not both at once\n']);
    const since = await mgpt(['search', 'x', '--since', 'lately'], env);
    expect([since.code, since.stderr]).toEqual([2, expect.stringContaining('--since must be an age (30m, 24h, 7d, 2w) or a date')]);
  });
});

describe('opening a database of an earlier release', () => {
  it('upgrades it, saying so step by step on stderr, and its old messages are searchable', async () => {
    const path = `${dir}/old.db`;
    const raw = new Database(path);
    const before = MIGRATIONS.findIndex((m) => m.includes('CREATE VIRTUAL TABLE messages_search'));
    for (const [v, sql] of MIGRATIONS.slice(0, before).entries()) {
      raw.exec(sql);
      raw.pragma(`user_version = ${v + 1}`);
    }
    raw.prepare(`INSERT INTO entities (id, account_id, name, instructions, model, state, budget_tokens, cap_tokens, created_at, updated_at)
      VALUES ('e1', 'local', 'ada', '', 'mgpt-1-27b', 'none', 32000, 1000000, 't', 't')`).run();
    raw.prepare(`INSERT INTO messages (entity_id, seq, role, content, tokens, created_at) VALUES ('e1', 1, 'user', 'zanzibar42 is the word', 5, 't')`).run();
    raw.close();
    const env = cliEnv(`${dir}/old`, { MGPT_DB: path });
    const r = await mgpt(['search', 'zanzibar42', '--json'], env);
    const steps = MIGRATIONS.length - before;
    expect(r.stderr.split('\n').filter((l) => l.startsWith('mgpt: upgrad'))).toHaveLength(2 * steps);
    expect(r.stderr).toContain(`mgpt: upgrading the database (${before + 1} of ${MIGRATIONS.length}): Search (mgpt search)…\n`);
    expect(r.stderr).toMatch(new RegExp(`mgpt: upgraded \\(${MIGRATIONS.length} of ${MIGRATIONS.length}\\) in \\d+\\.\\d s\\n`));
    expect(JSON.parse(r.stdout).data).toMatchObject([{ entity_id: 'e1', seq: 1 }]);
    // Once upgraded, it opens silently.
    expect((await mgpt(['entities', 'list'], env)).stderr).not.toContain('upgrad');
  });
});

describe('file errors in words', () => {
  it('says no such file, a directory or bad JSON instead of ENOENT, EISDIR or a parser trace', async () => {
    const env = cliEnv(`${dir}/files`);
    expect((await mgpt(['entities', 'create', '--name', 'ada'], env)).code).toBe(0);
    const missing = await mgpt(['send', 'ada', '-f', `${dir}/nope.txt`], env);
    expect([missing.code, missing.stderr]).toEqual([2, `error: cannot read ${dir}/nope.txt: no such file\n`]);
    const folder = await mgpt(['send', 'ada', '-f', dir], env);
    expect(folder.stderr).toBe(`error: cannot read ${dir}: it is a directory\n`);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${dir}/tools.json`, '[{"type": "function",');
    const json = await mgpt(['respond', 'hi', '--tools', `${dir}/tools.json`], env);
    expect([json.code, json.stderr]).toEqual([2, expect.stringMatching(new RegExp(`^error: --tools ${dir}/tools.json: not valid JSON \\(`))]);
    const batch = await mgpt(['batch', `${dir}/jobs.jsonl`], env);
    expect(batch.stderr).toBe(`error: cannot read ${dir}/jobs.jsonl: no such file\n`);
  });
});
