import { execFile } from 'node:child_process';
import { copyFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLIENTS_DIR, clientMissing, clientModule } from '../helpers/clients.js';
import { spawnedServe } from '../helpers/spawned-serve.js';
import { tempDir } from '../helpers/temp.js';

/**
 * The OpenAI Agents SDK (@openai/agents 0.20.0, in the test clients' tree) with OpenAIConversationsSession
 * pointed at a spawned `mgpt serve`: an agent run that calls a function tool, then a second run in
 * another process that resumes the same conversation. The SDK declares Node >= 22 (through
 * openai 7) but runs on Node 20, where this suite runs.
 */
const installed = clientModule('@openai/agents') !== null;
if (!installed) clientMissing('@openai/agents');
const s = spawnedServe();
const SOURCE = fileURLToPath(new URL('../helpers/agents-session.mjs', import.meta.url));

/** The session script beside the clients' node_modules, so its imports resolve in their tree (as ESM). */
function placedScript(): string {
  const dir = tempDir('mgpt-agents-');
  symlinkSync(join(CLIENTS_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir');
  copyFileSync(SOURCE, join(dir, 'agents-session.mjs'));
  return join(dir, 'agents-session.mjs');
}
let SCRIPT = '';

async function agentRun(input: string, conversation?: string): Promise<{ output: string; conversation: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, [SCRIPT, input, ...(conversation ? [conversation] : [])], {
    env: { ...process.env, MGPT_URL: s.url, MGPT_KEY: s.key },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

// Skipped only where the Agents SDK is not installed (a test tool kept out of package.json: it declares
// Node 22): the banner above says so, and CI (MGPT_TEST_REQUIRE_CLIENTS=1) fails instead of skipping.
describe.skipIf(!installed)('Agents SDK with OpenAIConversationsSession', () => {
  it('runs a function tool in one process and resumes the conversation in another', async () => {
    SCRIPT = placedScript();
    s.fake.script({ toolCalls: [{ id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}' }] }, { text: 'It is -3 in Oslo.' });
    const first = await agentRun('What is the weather in Oslo?');
    expect(first.output).toBe('It is -3 in Oslo.');
    expect(first.conversation).toMatch(/^conv_[0-9a-f]{32}$/);
    const toolRound = s.fake.requests.at(-1)!.body.messages;
    expect(toolRound.at(-1)).toEqual({ role: 'tool', content: '{"city":"Oslo","celsius":-3}', tool_call_id: 'call_a' });

    const second = await agentRun('And tomorrow?', first.conversation);
    expect(second.conversation).toBe(first.conversation);
    expect(second.output).toBe('reply: And tomorrow?');
    // The second process saw the first run's turn, read back from the conversation.
    const seen = s.fake.requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === 'user' || (m.role === 'assistant' && !('tool_calls' in m)));
    expect(seen.map((m: { content: string }) => m.content)).toEqual(['What is the weather in Oslo?', 'It is -3 in Oslo.', 'And tomorrow?']);
    const entityId = first.conversation.slice(5).replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
    const stored = (await s.api('GET', `/v1/entities/${entityId}/messages`)).json.data.map((m: { role: string; content: string }) => [m.role, m.content]);
    expect(stored).toEqual([['user', 'What is the weather in Oslo?'], ['assistant', 'It is -3 in Oslo.'], ['user', 'And tomorrow?'], ['assistant', 'reply: And tomorrow?']]);
  }, 60_000);
});
