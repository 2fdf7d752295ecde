import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { clientMissing, clientModule } from '../helpers/clients.js';
import { spawnedServe } from '../helpers/spawned-serve.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Codex CLI (@openai/codex 0.171.0, in the test clients' tree; its native binary ships in the package) with
 * a custom model provider (`wire_api = "responses"`) pointed at a spawned `mgpt serve`, as
 * docs/openai-clients.md#codex-cli sets it up: `codex exec` runs one task through a function call
 * (its exec_command tool) and the call's output, the fake scripting the model's side.
 */
const CODEX = clientModule('@openai/codex/bin/codex.js');
if (CODEX === null) clientMissing('@openai/codex');
const s = spawnedServe();

/** The config.toml of docs/openai-clients.md#codex-cli, as written there, with only the server's port changed. */
function codexHome(dir: string): string {
  const doc = readFileSync(new URL('../../docs/openai-clients.md', import.meta.url), 'utf8');
  const toml = /## Codex CLI[\s\S]*?```toml\n([\s\S]*?)```/.exec(doc)![1];
  expect(toml).toContain('base_url = "http://127.0.0.1:8080/v1"');
  const home = join(dir, 'codex-home');
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, 'config.toml'), toml.replace('http://127.0.0.1:8080', s.url));
  return home;
}

// Skipped only where Codex is not installed (it is a 424 MB test tool kept out of package.json): the banner
// above says so, and CI (MGPT_TEST_REQUIRE_CLIENTS=1) fails instead of skipping.
describe.skipIf(CODEX === null)('Codex CLI on mgpt serve', () => {
  it('codex exec runs a task through exec_command and its output to a final answer', async () => {
    await s.api('POST', '/v1/entities', { model: 'mgpt-1-27b', name: 'codex', instructions: 'You are a careful coding agent.' });
    const dir = tempDir('mgpt-codex-');
    const work = join(dir, 'work');
    mkdirSync(work);
    s.fake.fallback = (body) => {
      const last = body.messages.at(-1);
      if (last.role === 'tool') return { text: `The command printed: ${String(last.content).includes('mgpt-codex-ok') ? 'mgpt-codex-ok' : last.content}` };
      return { toolCalls: [{ id: 'call_codex', name: 'exec_command', arguments: JSON.stringify({ cmd: 'echo mgpt-codex-ok' }) }] };
    };
    const run = promisify(execFile)(process.execPath, [CODEX!, 'exec', '--skip-git-repo-check', '--sandbox', 'danger-full-access', 'Print mgpt-codex-ok with echo'], {
      cwd: work, env: { PATH: process.env.PATH!, HOME: dir, CODEX_HOME: codexHome(dir), MGPT_API_KEY: s.key }, timeout: 90_000,
    });
    // Codex reads a piped stdin as more of the prompt: there is none.
    run.child.stdin!.end();
    const { stdout } = await run;
    expect(stdout).toContain('The command printed: mgpt-codex-ok');
    const calls = s.fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
    const answered = calls.find((r) => r.body.messages.at(-1).role === 'tool')!;
    expect(answered.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_codex' });
    expect(answered.body.messages.at(-1).content).toContain('mgpt-codex-ok');
    // The entity's instructions lead, then Codex's own: Codex's requests are store: false, answered in the entity's voice.
    expect(answered.body.messages[0].content).toMatch(/^You are a careful coding agent\.\n\n/);
    expect(answered.body.messages.filter((m: { role: string }) => m.role === 'system')).toHaveLength(1);
    // Codex sends its environment and the task as two user messages: the request joins them, so roles alternate.
    const roles = answered.body.messages.map((m: { role: string }) => m.role);
    expect(roles.slice(1, 4)).toEqual(['user', 'assistant', 'tool']);
    expect(answered.body.messages[1].content).toMatch(/<environment_context>[\s\S]*\n\nPrint mgpt-codex-ok with echo$/);
  }, 120_000);
});
