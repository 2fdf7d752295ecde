import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt } from '../helpers/cli.js';
import { ONE_PIXEL_PNG, type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir();
let fake: FakeOpenAI;
let env: Record<string, string>;
const json = (s: string) => JSON.parse(s);
const SECRET = 'Narrate Glimmerdeep. PROMPT-MARKER-77.';
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

beforeAll(async () => {
  fake = await startFakeOpenAI();
  env = cliEnv(dir, { MGPT_PROVIDER: 'openai', MGPT_PROVIDER_URL: fake.url, MGPT_PROMPTS_DIR: join(dir, 'prompts') });
});
afterAll(() => fake.close());

describe('prompts', () => {
  it('adds, lists and shows stored prompts, with front matter from a file or flags', async () => {
    expect((await mgpt(['prompts', 'add', 'narrator', SECRET], env)).code).toBe(0);
    writeFileSync(join(dir, 'quest.md'), '---\nadditionalInstructions: Answer in JSON.\n---\nYou run quests.\n');
    writeFileSync(join(dir, 'contract.json'), JSON.stringify({ type: 'json_object' }));
    expect((await mgpt(['prompts', 'add', 'quest', '-f', join(dir, 'quest.md'), '--response-format', join(dir, 'contract.json')], env)).code).toBe(0);
    const dup = await mgpt(['prompts', 'add', 'quest', 'again'], env);
    expect([dup.code, dup.stderr]).toEqual([5, expect.stringMatching(/already exists/)]);
    expect((await mgpt(['prompts', 'add', '../evil', 'x'], env)).code).toBe(2);
    const list = json((await mgpt(['prompts', 'list', '--json'], env)).stdout);
    expect(list.data.map((p: any) => p.name)).toEqual(['narrator', 'quest']);
    expect((await mgpt(['prompts', 'list'], env)).stdout).toMatch(/^quest\t15\tjson_object\tyes\t/m);
    const show = json((await mgpt(['prompts', 'show', 'quest', '--json'], env)).stdout);
    expect(show).toMatchObject({ name: 'quest', text: 'You run quests.', responseFormat: { type: 'json_object' }, additionalInstructions: 'Answer in JSON.' });
    expect((await mgpt(['prompts', 'show', 'narrator'], env)).stdout).toBe(SECRET + '\n');
    expect((await mgpt(['prompts', 'show', 'missing'], env)).code).toBe(4);
  });

  it('imports a directory of prompt files and removes a prompt for good (issue 34, item 7)', async () => {
    const src = join(dir, 'import-src');
    mkdirSync(src);
    writeFileSync(join(src, 'guide.md'), 'You guide.\n');
    writeFileSync(join(src, 'quest.md'), 'Not the stored quest.\n');
    const imported = await mgpt(['prompts', 'import', src, '--json'], env);
    expect([imported.code, json(imported.stdout)]).toEqual([0, { imported: ['guide'], skipped: ['quest'] }]);
    expect(json((await mgpt(['prompts', 'show', 'quest', '--json'], env)).stdout).text).toBe('You run quests.');
    const rm = await mgpt(['prompts', 'rm', 'guide'], env);
    expect([rm.code, rm.stderr]).toEqual([0, 'removed stored prompt guide\n']);
    expect((await mgpt(['prompts', 'show', 'guide'], env)).code).toBe(4);
    expect(json((await mgpt(['prompts', 'import', src, '--json'], env)).stdout)).toEqual({ imported: [], skipped: ['guide', 'quest'] });
    expect((await mgpt(['prompts', 'rm', 'guide'], env)).code).toBe(4);
    expect((await mgpt(['prompts', 'import', join(dir, 'nowhere')], env)).code).toBe(2);
  });
});

describe('universes and respond', () => {
  let u: string;

  it('creates, lists and shows universes', async () => {
    const c = await mgpt(['universes', 'create', '--prompt', 'narrator', '--name', 'Tuesday'], env);
    expect(c.code).toBe(0);
    u = c.stdout.trim();
    expect(u).toMatch(/^[0-9a-f-]{36}$/);
    const created = json((await mgpt(['universes', 'create', '--prompt', 'quest', '--json'], env)).stdout);
    expect(created).toMatchObject({ prompt: { storedPrompt: 'quest', stored: true } });
    const list = json((await mgpt(['universes', 'list', '--json'], env)).stdout);
    expect(list.data.map((x: any) => x.id)).toEqual(expect.arrayContaining([u, created.universe]));
    expect((await mgpt(['universes', 'create', '--prompt', 'nope'], env)).code).toBe(4);
    expect((await mgpt(['universes', 'show', '00000000-0000-4000-8000-000000000000'], env)).stderr).toMatch(/^error: Universe not found/m);
  });

  it('responds from an argument and stdin, with --json and a requestId', async () => {
    const r = await mgpt(['respond', u, 'I open the door.'], env);
    expect(r).toMatchObject({ code: 0, stdout: 'reply: I open the door.\n' });
    expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: SECRET });
    const piped = await mgpt(['respond', u, '-'], env, 'look around\n');
    expect(piped.stdout).toBe('reply: look around\n');
    const j = json((await mgpt(['respond', u, 'once', '--request-id', 'cli-1', '--json'], env)).stdout);
    expect(j).toMatchObject({ assistantRaw: 'reply: once', requestLog: { id: expect.any(String) }, diagnostics: { prompt: { totalMessages: 5 } } });
    const calls = fake.requests.length;
    const again = json((await mgpt(['respond', u, 'once', '--request-id', 'cli-1', '--json'], env)).stdout);
    expect(again).toEqual({ ...j, diagnostics: { ...j.diagnostics, replayed: true } });
    expect(fake.requests.length).toBe(calls);
    const bad = await mgpt(['respond', u, 'x', '--model', 'gpt-4o'], env);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/^error: model: required; one of/m)]);
  });

  it('runs tool calls through --tool-exec, reporting a failing tool as ok: false', async () => {
    writeFileSync(join(dir, 'tools.json'), JSON.stringify([{ type: 'function', name: 'roll' }, { type: 'function', name: 'look' }]));
    writeFileSync(
      join(dir, 'tool.sh'),
      `#!/bin/sh\nin=$(cat)\necho "$in" >> "${join(dir, 'tool-calls.log')}"\ncase "$in" in *'"look"'*) echo "too dark" >&2; exit 3;; esac\necho '{"value":6}'\n`,
      { mode: 0o755 },
    );
    fake.script({ toolCalls: [{ id: 'k1', name: 'roll', arguments: '{"sides":6}' }, { id: 'k2', name: 'look', arguments: '{}' }] }, { text: 'A six, in the dark.' });
    const r = await mgpt(['respond', u, 'roll and look', '--tools', join(dir, 'tools.json'), '--tool-exec', join(dir, 'tool.sh')], env);
    expect(r).toMatchObject({ code: 0, stdout: 'A six, in the dark.\n' });
    const calls = readFileSync(join(dir, 'tool-calls.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(calls).toEqual([
      { callId: 'k1', name: 'roll', arguments: { sides: 6 } },
      { callId: 'k2', name: 'look', arguments: {} },
    ]);
    const sent = fake.requests.at(-1)!.body.messages.slice(-2);
    expect(sent).toEqual([
      { role: 'tool', tool_call_id: 'k1', name: 'roll', content: '{"value":6}' },
      { role: 'tool', tool_call_id: 'k2', name: 'look', content: '{"ok":false,"error":{"error":"too dark","exitCode":3}}' },
    ]);
  });

  it('leaves a tool turn pending without --tool-exec, and takes --tool-results', async () => {
    fake.script({ toolCalls: [{ id: 'm1', name: 'roll', arguments: '{}' }] });
    const r = await mgpt(['respond', u, 'roll', '--tools', join(dir, 'tools.json')], env);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/tool call m1: roll \{\}/);
    expect(r.stderr).toContain(`the turn waits for tool results (m1): answer with \`mgpt respond ${u} --tool-results FILE\``);
    const waiting = await mgpt(['respond', u, 'something else'], env);
    expect([waiting.code, waiting.stderr]).toEqual([2, expect.stringMatching(/waiting for tool results \(m1\)/)]);
    writeFileSync(join(dir, 'results.json'), JSON.stringify([{ callId: 'm1', name: 'roll', output: { value: 2 }, ok: true }]));
    fake.script({ text: 'Two.' });
    const done = await mgpt(['respond', u, '--tool-results', join(dir, 'results.json')], env);
    expect(done.stdout).toBe('Two.\n');
  });

  it('names the pending calls in --json as pending_tool_calls, and on stderr', async () => {
    fake.script({ toolCalls: [{ id: 'j1', name: 'roll', arguments: '{"sides":6}' }] });
    const r = await mgpt(['respond', u, 'roll again', '--tools', join(dir, 'tools.json'), '--json'], env);
    expect(r.code).toBe(0);
    expect(json(r.stdout).pending_tool_calls).toEqual([{ callId: 'j1', name: 'roll', arguments: { sides: 6 } }]);
    expect(r.stderr).toMatch(/waits for tool results \(j1\)/);
    writeFileSync(join(dir, 'results-j1.json'), JSON.stringify([{ callId: 'j1', name: 'roll', output: { value: 4 }, ok: true }]));
    fake.script({ text: 'Four.' });
    const done = await mgpt(['respond', u, '--tool-results', join(dir, 'results-j1.json'), '--json'], env);
    expect(json(done.stdout).pending_tool_calls).toBeUndefined();
  });

  it('wraps a tool output that is not a JSON object as the REPL does: { value } for other JSON, { text } for plain text', async () => {
    const own = (await mgpt(['universes', 'create', '--prompt', 'narrator'], env)).stdout.trim();
    writeFileSync(join(dir, 'tool-plain.sh'), `#!/bin/sh\ncase "$(cat)" in *'"roll"'*) echo 6;; *) echo "too dark";; esac\n`, { mode: 0o755 });
    fake.script({ toolCalls: [{ id: 'w1', name: 'roll', arguments: '{}' }, { id: 'w2', name: 'look', arguments: '{}' }] }, { text: 'Six, dark.' });
    const r = await mgpt(['respond', own, 'roll and look', '--tools', join(dir, 'tools.json'), '--tool-exec', join(dir, 'tool-plain.sh')], env);
    expect(r).toMatchObject({ code: 0, stdout: 'Six, dark.\n' });
    expect(fake.requests.at(-1)!.body.messages.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'w1', name: 'roll', content: '{"value":6}' },
      { role: 'tool', tool_call_id: 'w2', name: 'look', content: '{"text":"too dark"}' },
    ]);
  });

  it('branches with --state-pointer, uses the stored contract, and feeds a document back inline', async () => {
    const before = json((await mgpt(['universes', 'show', u, '--doc'], env)).stdout);
    expect(JSON.stringify(before)).not.toContain('PROMPT-MARKER');
    expect((await mgpt(['respond', u, 'x', '--state-pointer', '999'], env)).code).toBe(2);
    const branched = json((await mgpt(['respond', u, 'branch here', '--state-pointer', '2', '--json'], env)).stdout);
    expect(branched.diagnostics.prompt.totalMessages).toBe(3);
    const shown = json((await mgpt(['universes', 'show', u, '--json'], env)).stdout);
    expect(shown.conversation.map((t: any) => t.content)).toEqual(['I open the door.', 'reply: I open the door.', 'branch here', 'reply: branch here']);

    const q = (await mgpt(['universes', 'create', '--prompt', 'quest'], env)).stdout.trim();
    await mgpt(['respond', q, 'begin', '--structured', '--additional-instructions'], env);
    expect(fake.requests.at(-1)!.body).toMatchObject({
      response_format: { type: 'json_object' },
      messages: [{ role: 'system', content: 'You run quests.\n\nAnswer in JSON.' }, { role: 'user', content: 'begin' }],
    });

    const docPath = join(dir, 'doc.json');
    writeFileSync(docPath, (await mgpt(['universes', 'show', u, '--doc'], env)).stdout);
    const inline = await mgpt(['respond', '--doc', docPath, 'what if?'], env);
    expect(inline.stdout).toBe('reply: what if?\n');
    expect(fake.requests.at(-1)!.body.messages.length).toBe(6);
    expect(json((await mgpt(['universes', 'show', u, '--json'], env)).stdout).conversation).toHaveLength(4);
    const standalone = await mgpt(['respond', 'Say hi', '--model', 'general-frozen-overridable', '--model-override', 'vendor/x'], env);
    expect(standalone.stdout).toBe('reply: Say hi\n');
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'vendor/x', messages: [{ role: 'user', content: 'Say hi' }] });
  });
});

describe('image and logs', () => {
  it('writes a valid PNG from the base64 result', async () => {
    const out = join(dir, 'scene.png');
    const r = await mgpt(['image', '--scene', 's-9', '--system-prompt', SECRET, '--description', 'A harbour', '--ref', 'the keeper:', '--ref', 'https://example.com/k.png', '-o', out], env);
    expect(r).toMatchObject({ code: 0, stdout: out + '\n' });
    expect(readFileSync(out).subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(readFileSync(out)).toEqual(Buffer.from(ONE_PIXEL_PNG.split(',')[1], 'base64'));
    expect(fake.requests.at(-1)!.body.messages[1].content).toEqual([
      { type: 'text', text: 'the keeper:' },
      { type: 'image_url', image_url: { url: 'https://example.com/k.png' } },
      { type: 'text', text: 'A harbour' },
    ]);
    const j = json((await mgpt(['image', '--scene', 's-10', '--system-prompt', 'x', '--description', 'y', '--aspect', '4:3', '-o', join(dir, 'b.png'), '--json'], env)).stdout);
    expect(j).toMatchObject({ sceneUid: 's-10', model: 'image-1', images: [{ mimeType: 'image/png', bytes: 69, file: join(dir, 'b.png') }] });
    expect((await mgpt(['image', '--scene', 's', '--system-prompt', 'x', '--description', 'y', '--size', '8K'], env)).code).toBe(2);
    // Offline: the echo provider draws a real PNG.
    const offline = cliEnv(join(dir, 'offline'));
    const o = await mgpt(['image', '--scene', 'calm', '--system-prompt', 'x', '--description', 'y', '-o', join(dir, 'echo.png')], offline);
    expect(o.code).toBe(0);
    expect(readFileSync(join(dir, 'echo.png')).subarray(0, 8)).toEqual(PNG_SIGNATURE);
  });

  it('lists, filters, pages and shows logs without the prompt text', async () => {
    await mgpt(['respond', 'standalone', '--game', 'g-7', '--request-id', 'log-me'], env);
    const list = json((await mgpt(['logs', '--json', '--page-size', '100'], env)).stdout);
    expect(list).toMatchObject({ page: 1, pageSize: 100, hasMore: false });
    expect(list.total).toBeGreaterThan(10);
    const images = json((await mgpt(['logs', '--kind', 'image', '--json'], env)).stdout);
    expect(images.data.length).toBeGreaterThanOrEqual(2);
    expect(images.data.every((l: any) => l.kind === 'image')).toBe(true);
    const byGame = json((await mgpt(['logs', '--game', 'g-7', '--json'], env)).stdout);
    expect(byGame.data.map((l: any) => l.requestId)).toEqual(['log-me']);
    expect(json((await mgpt(['logs', '--request-id', 'log-me', '--json'], env)).stdout).total).toBe(1);
    expect(json((await mgpt(['logs', '--user', 'nobody', '--json'], env)).stdout).total).toBe(0);
    const p2 = json((await mgpt(['logs', '--page', '2', '--page-size', '3', '--json'], env)).stdout);
    expect(p2).toMatchObject({ page: 2, pageSize: 3, hasMore: true });
    expect((await mgpt(['logs', '--page', '0'], env)).code).toBe(2);
    expect((await mgpt(['logs', '--page-size', '101'], env)).code).toBe(2);
    // --limit is the name every listing command uses; --page-size stays as its old alias.
    expect(json((await mgpt(['logs', '--limit', '5', '--json'], env)).stdout)).toMatchObject({ pageSize: 5 });
    expect(json((await mgpt(['logs', '--limit', '4', '--page-size', '4', '--json'], env)).stdout)).toMatchObject({ pageSize: 4 });
    const both = await mgpt(['logs', '--limit', '5', '--page-size', '6'], env);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--limit and --page-size are the same option');
    expect((await mgpt(['logs', '--limit', '101'], env)).code).toBe(2);
    const detail = json((await mgpt(['logs', 'show', byGame.data[0].id, '--json'], env)).stdout);
    expect(detail).toMatchObject({ id: byGame.data[0].id, gameId: 'g-7', request: { mode: 'standalone' }, response: expect.any(Object) });
    const human = (await mgpt(['logs'], env)).stdout + (await mgpt(['logs', 'show', images.data[0].id], env)).stdout;
    const everything = JSON.stringify(list) + human + JSON.stringify(await Promise.all(list.data.map(async (l: any) => (await mgpt(['logs', 'show', l.id, '--json'], env)).stdout)));
    expect(everything).not.toContain('PROMPT-MARKER');
    expect(everything).not.toContain('Glimmerdeep');
    expect((await mgpt(['logs', 'show', 'nope'], env)).code).toBe(4);
  });
});
