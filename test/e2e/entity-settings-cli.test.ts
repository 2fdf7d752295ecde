import { describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

// entities create takes every setting entities update takes, and entities show prints them all
// with the entity's pinned memory (the echo provider, the local backend).
const env = cliEnv(tempDir());

describe('entity settings on the command line', () => {
  it('create --budget --cap --recall --recall-tokens --memory-tool: show prints each, and the pinned memory', async () => {
    const made = await mgpt(['entities', 'create', '--name', 'ada', '--budget', '8000', '--cap', '50000', '--recall', 'auto', '--recall-tokens', '300', '--memory-tool', '--json'], env);
    expect(made.stderr).toBe('');
    expect(JSON.parse(made.stdout)).toMatchObject({ window: { budget_tokens: 8000 }, transcript: { cap_tokens: 50000 }, recall: 'auto', recall_tokens: 300, memory_tool: true });
    await mgpt(['memory', 'set', 'ada', 'city', 'Porto, since May'], env);
    const shown = (await mgpt(['entities', 'show', 'ada'], env)).stdout;
    expect(shown).toMatch(/^window +0 \/ 8,000 tokens/m);
    expect(shown).toMatch(/^transcript +0 messages, 0 \/ 50,000 tokens$/m);
    expect(shown).toMatch(/^recall +auto: .*; at most 300 tokens a turn$/m);
    expect(shown).toMatch(/^memory tool +on: every turn offers the model remember$/m);
    expect(shown).toMatch(/^pinned memory \d+ \/ 2,000 tokens .* 1 \/ 16 blocks$/m);
    expect(shown).toMatch(/^ {2}city \(\d+ tokens?\)\n {4}Porto, since May$/m);
    const json = JSON.parse((await mgpt(['entities', 'show', 'ada', '--json'], env)).stdout);
    expect(json.memory_tool).toBe(true);
    expect(json.pinned_memory).toMatchObject({ memory: [{ label: 'city', text: 'Porto, since May' }], limits: { blocks: 16 } });
  });

  it('update --no-memory-tool turns it off; show says so; a bad setting on create is refused, creating nothing', async () => {
    expect((await mgpt(['entities', 'update', 'ada', '--no-memory-tool'], env)).code).toBe(0);
    expect((await mgpt(['entities', 'show', 'ada'], env)).stdout).toMatch(/^memory tool +off: a turn offers remember only when its send asks/m);
    const bad = await mgpt(['entities', 'create', '--name', 'bo', '--budget', '5'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^error: budget_tokens must be an integer from/m);
    expect((await mgpt(['entities', 'show', 'bo'], env)).code).toBe(4);
  });
});
