import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseJq, runJq } from '../../src/cli/jq.js';
import { splitJsonFields } from '../../src/cli/json-flags.js';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-json-');

// Issue 37, item 12: gh's --json FIELDS and --jq, on every command that has --json.
describe('--json FIELDS and --jq', () => {
  it('pick fields of an object or of each item of a list, and filter with the jq subset', async () => {
    const env = cliEnv(join(dir, 'flags'));
    const id = (await mgpt(['entities', 'create', '--name', 'ada'], env)).stdout.trim();
    await mgpt(['entities', 'create', '--name', 'bob'], env);
    const list = await mgpt(['entities', 'list', '--json', 'name,id'], env);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([{ name: 'bob', id: expect.any(String) }, { name: 'ada', id }]);
    expect(JSON.parse((await mgpt(['entities', 'show', 'ada', '--json=name'], env)).stdout)).toEqual({ name: 'ada' });
    expect((await mgpt(['entities', 'list', '--json', '--jq', '.data[] | .name'], env)).stdout).toBe('bob\nada\n');
    expect((await mgpt(['entities', 'list', '--json', 'id', '--jq', '.[1].id'], env)).stdout).toBe(`${id}\n`);
    expect((await mgpt(['entities', 'show', 'ada', '--json', '--jq', '.transcript'], env)).stdout).toBe('{"messages":0,"tokens":0,"cap_tokens":1000000}\n');
    expect((await mgpt(['entities', 'list', '--json', '--jq', '.data | length'], env)).stdout).toBe('2\n');
    // A subcommand that reads its parent's --json (logs show) and a command of another noun.
    expect((await mgpt(['config', 'get', 'backend', '--json', '--jq', '.value'], env)).stdout).toBe('local\n');
  });

  it('a field the output lacks, a bad expression or --jq without --json: exit 2, saying what there is', async () => {
    const env = cliEnv(join(dir, 'bad'));
    await mgpt(['entities', 'create', '--name', 'ada'], env);
    const field = await mgpt(['entities', 'list', '--json', 'name,colour'], env);
    expect([field.code, field.stdout]).toEqual([2, '']);
    expect(field.stderr).toMatch(/^error: unknown JSON field "colour"\nhint: available fields: id, object, name, /);
    const path = await mgpt(['entities', 'show', 'ada', '--json', '--jq', '.window.colour'], env);
    expect([path.code, path.stderr]).toEqual([2, expect.stringMatching(/unknown JSON field "colour"\nhint: available fields: budget_tokens, /)]);
    expect((await mgpt(['entities', 'show', 'ada', '--json', '--jq', '.colour?'], env)).stdout).toBe('null\n');
    const expr = await mgpt(['entities', 'create', '--name', 'never', '--json', '--jq', 'map(.id)'], env);
    expect([expr.code, expr.stderr]).toEqual([2, expect.stringMatching(/^error: --jq: cannot read "map\(\.id\)": mgpt's --jq understands \., \.field/)]);
    expect((await mgpt(['entities', 'show', 'never'], env)).code).toBe(4); // refused before it ran
    const noJson = await mgpt(['entities', 'list', '--jq', '.data'], env);
    expect([noJson.code, noJson.stderr]).toEqual([2, 'error: --jq works on JSON output\nhint: add --json\n']);
  });

  it('takes FIELDS only when the word after --json is a field list', () => {
    expect(splitJsonFields(['ask', '--json', 'what is 2+2'])).toEqual(['ask', '--json', 'what is 2+2']);
    expect(splitJsonFields(['entities', 'list', '--json', 'id,name'])).toEqual(['entities', 'list', '--json', '--json-fields', 'id,name']);
    expect(splitJsonFields(['send', 'ada', '--', '--json', 'id'])).toEqual(['send', 'ada', '--', '--json', 'id']);
  });

  it('runs the documented jq subset', () => {
    const doc = { data: [{ id: 'a', tags: ['x', 'y'] }, { id: 'b', tags: [] }], 'odd key': 1 };
    const jq = (e: string) => runJq(parseJq(e), doc);
    expect(jq('.')).toEqual([doc]);
    expect(jq('.data[].id')).toEqual(['a', 'b']);
    expect(jq('.data[] | .tags | length')).toEqual([2, 0]);
    expect(jq('.data[-1].id')).toEqual(['b']);
    expect(jq('.data[5]')).toEqual([null]);
    expect(jq('."odd key"')).toEqual([1]);
    expect(jq('.["odd key"]')).toEqual([1]);
    expect(jq('keys')).toEqual([['data', 'odd key']]);
    expect(jq('.data[0].tags[]')).toEqual(['x', 'y']);
    expect(() => jq('.data.id')).toThrow(/cannot take \.id of an array/);
    expect(() => parseJq('.data | select(.id)')).toThrow(/cannot read "select\(\.id\)"/);
  });
});
