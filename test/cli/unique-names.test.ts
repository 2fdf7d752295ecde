import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// Issue 37, item 1: from the CLI a name names one entity, so `mgpt send ada` always resolves.
describe('entity names are unique from the CLI', () => {
  const dir = tempDir('mgpt-names-');

  it('refuses a second entities create with the same name, with a hint', async () => {
    const env = cliEnv(join(dir, 'create'));
    expect((await mgpt(['entities', 'create', '--name', 'ada'], env)).code).toBe(0);
    const again = await mgpt(['entities', 'create', '--name', 'ada'], env);
    expect(again.code).toBe(5);
    expect(again.stderr).toContain('error: an entity named "ada" already exists');
    expect(again.stderr).toContain('hint: choose another --name, or address the existing one by its id');
    expect((await mgpt(['entities', 'create'], env)).code).toBe(0); // unnamed entities are not names
    expect((await mgpt(['entities', 'create'], env)).code).toBe(0);
    expect((await mgpt(['send', 'ada', 'hi'], env)).code).toBe(0);
  });

  it('refuses a taken name on the remote backend too, and POST /v1/entities on mgpt serve refuses it the same way', async () => {
    const serverEnv = cliEnv(join(dir, 'served'), { MGPT_DB: join(dir, 'served', 'served.db') });
    const key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], serverEnv)).stdout.trim();
    const server = spawnMgpt(['serve', '--port', '0'], serverEnv);
    try {
      const url = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
      const client = cliEnv(join(dir, 'client'), { MGPT_BACKEND: 'remote', MGPT_BASE_URL: url, MGPT_ENTITIES_URL: `${url}/v1`, MGPT_API_KEY: key });
      expect((await mgpt(['entities', 'create', '--name', 'far'], client)).code).toBe(0);
      const again = await mgpt(['entities', 'create', '--name', 'far'], client);
      expect([again.code, again.stderr]).toEqual([5, expect.stringContaining('error: an entity named "far" already exists')]);
      const http = await fetch(`${url}/v1/entities`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mgpt-1-27b', name: 'far' }) });
      expect(http.status).toBe(409);
      expect(((await http.json()) as { error: string }).error).toBe('an entity named "far" already exists');
      const list = (await (await fetch(`${url}/v1/entities`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { name: string }[] };
      expect(list.data.filter((e) => e.name === 'far')).toHaveLength(1);
    } finally {
      server.kill('SIGTERM');
      await server.result;
    }
  });

  it('numbers an import whose name is taken, says so on stderr, and refuses a taken --name', async () => {
    const env = cliEnv(join(dir, 'import'));
    expect((await mgpt(['entities', 'create', '--name', 'ada'], env)).code).toBe(0);
    const tar = join(dir, 'ada.tar');
    expect((await mgpt(['export', 'ada', '-o', tar], env)).code).toBe(0);
    const second = await mgpt(['import', tar, '--json'], env);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout).name).toBe('ada (2)');
    expect(JSON.parse(second.stdout)).not.toHaveProperty('renamedFrom');
    expect(second.stderr).toBe('an entity named "ada" exists: imported as "ada (2)" (--name sets another)\n');
    const third = await mgpt(['import', tar], env);
    expect(third.stderr).toContain('imported as "ada (3)"');
    const named = await mgpt(['import', tar, '--name', 'ada (2)'], env);
    expect(named.code).toBe(5);
    expect(named.stderr).toContain('an entity named "ada (2)" already exists');
    const list = JSON.parse((await mgpt(['entities', 'list', '--json'], env)).stdout) as { data: { name: string }[] };
    expect(list.data.map((e) => e.name).sort()).toEqual(['ada', 'ada (2)', 'ada (3)']);
    expect((await mgpt(['send', 'ada', 'hi'], env)).code).toBe(0);
  });

  it('batch makes one entity for a newEntity name repeated in the file, and reuses it on a re-run', async () => {
    const env = cliEnv(join(dir, 'batch'));
    const jobs = [1, 2, 3].map((i) => JSON.stringify({ id: `n${i}`, newEntity: { name: 'ada' }, input: `hello ${i}` })).join('\n');
    const file = join(dir, 'jobs.jsonl');
    (await import('node:fs')).writeFileSync(file, jobs + '\n');
    const r = await mgpt(['batch', file, '--concurrency', '3'], env);
    expect(r.code).toBe(0);
    const results = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { ok: boolean; entity: string });
    expect(results.every((x) => x.ok)).toBe(true);
    expect(new Set(results.map((x) => x.entity)).size).toBe(1);
    const list = JSON.parse((await mgpt(['entities', 'list', '--json'], env)).stdout) as { data: { name: string; transcript: { messages: number } }[] };
    expect(list.data).toHaveLength(1);
    expect(list.data[0].transcript.messages).toBe(6);
    // A job added later with the same name reuses the entity an earlier run made.
    (await import('node:fs')).writeFileSync(file, jobs + '\n' + JSON.stringify({ id: 'n4', newEntity: { name: 'ada' }, input: 'hello 4' }) + '\n');
    const again = await mgpt(['batch', file], env);
    expect(again.code).toBe(0);
    expect(JSON.parse((await mgpt(['entities', 'list', '--json'], env)).stdout).data).toHaveLength(1);
    expect((await mgpt(['send', 'ada', 'hi'], env)).code).toBe(0);
  });
});
