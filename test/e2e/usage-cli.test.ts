import { beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// mgpt usage as a person runs it (the echo provider): every turn is in the logs with its entity,
// and the ledger's sums by entity, model and day.
const dir = tempDir();
const env = cliEnv(dir);
let ada: string;

beforeAll(async () => {
  ada = (await mgpt(['entities', 'create', '--name', 'ada'], env)).stdout.trim();
  await mgpt(['entities', 'create', '--name', 'bo'], env);
  for (let i = 1; i <= 3; i++) await mgpt(['send', 'ada', `note ${i}`], env);
  await mgpt(['send', 'bo', 'hello'], env);
});

describe('mgpt usage', () => {
  it('--by entity: one line per entity with its name, charges and cost; --json carries the exact numbers', async () => {
    const tsv = (await mgpt(['usage', '--by', 'entity'], env)).stdout.trim().split('\n').map((l) => l.split('\t'));
    const line = tsv.find((cells) => cells[0] === ada)!;
    expect(line.slice(1, 3)).toEqual(['ada', '3']);
    expect(line[5]).toMatch(/^\$0\.\d+$/);
    const json = JSON.parse((await mgpt(['usage', '--by', 'entity', '--json'], env)).stdout);
    expect(json).toMatchObject({ object: 'usage', by: 'entity', since: null, charges: 4 });
    expect(json.data.map((l: { name: string }) => l.name).sort()).toEqual(['ada', 'bo']);
  });

  it('by day (the default) and model; --since in the future counts nothing', async () => {
    const day = (await mgpt(['usage'], env)).stdout.trim().split('\n');
    expect(day).toHaveLength(1);
    expect(day[0]!.split('\t').slice(0, 2)).toEqual([new Date().toISOString().slice(0, 10), '4']);
    expect((await mgpt(['usage', '--by', 'model'], env)).stdout).toMatch(/^mgpt-1-27b\t4\t/);
    expect(JSON.parse((await mgpt(['usage', '--since', '2999-01-01', '--json'], env)).stdout)).toMatchObject({ data: [], charges: 0, cost_usd: 0 });
  });

  it("--by key: the local backend's own charges have no API key and read 'local' (null in --json)", async () => {
    expect((await mgpt(['usage', '--by', 'key'], env)).stdout).toMatch(/^local\t4\t/);
    expect(JSON.parse((await mgpt(['usage', '--by', 'key', '--json'], env)).stdout)).toMatchObject({ by: 'key', data: [{ key: null, charges: 4 }] });
  });

  it('refuses a grouping it does not know and a since that is not a date', async () => {
    const week = await mgpt(['usage', '--by', 'week'], env);
    expect(week.code).toBe(2);
    expect(week.stderr).toMatch(/day, model, entity, key/);
    const since = await mgpt(['usage', '--since', 'soon'], env);
    expect(since.code).toBe(2);
    expect(since.stderr).toMatch(/since must be a date or an ISO 8601 time/);
  });

  it('every turn is in mgpt logs, naming its entity', async () => {
    const logs = JSON.parse((await mgpt(['logs', '--json'], env)).stdout);
    expect(logs.total).toBe(4);
    expect(logs.data.filter((l: { entityId?: string }) => l.entityId === ada)).toHaveLength(3);
  });
});
