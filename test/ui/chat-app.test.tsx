import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalBackend } from '../../src/backends/local.js';
import type { Engine } from '../../src/engine/engine.js';
import { ChatApp } from '../../src/ui/chat-app.js';
import { ChatController, type ChatOptions } from '../../src/ui/chat-controller.js';
import { execTool } from '../../src/cli/tool-exec.js';
import { collect, makeEngine, sqliteOf } from '../helpers/engine.js';
import { type FakeOpenAI, echoLastUser, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('mgpt-chat-ui-');
let fake: FakeOpenAI;
let engine: Engine;
let backend: LocalBackend;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  mkdirSync(join(dir, 'prompts'));
  writeFileSync(join(dir, 'prompts', 'narrator.md'), 'You narrate.\n');
  engine = makeEngine(dir, { fake, windowBudget: 60, promptsDir: join(dir, 'prompts') });
  backend = new LocalBackend(engine);
});
afterAll(async () => {
  engine.close();
  await fake.close();
});
afterEach(() => {
  fake.fallback = echoLastUser;
});

async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The app on a fresh entity; `type` sends keystrokes, `frame` is the screen now. */
async function chat(opts: Partial<ChatOptions> = {}) {
  const e = await backend.createEntity({ model: 'mgpt-1-27b', name: `e${Math.random().toString(36).slice(2, 8)}` });
  const controller = new ChatController({ backend, admin: backend.admin, target: { kind: 'entity', id: e.id }, ...opts });
  const app = render(<ChatApp controller={controller} />);
  await controller.start();
  const frame = () => app.lastFrame() ?? '';
  const type = async (text: string) => {
    app.stdin.write(text);
    await new Promise((r) => setTimeout(r, 20));
  };
  const idle = () => until('the turn to end', () => !controller.getState().busy);
  const sees = (text: string, ms?: number) => until(JSON.stringify(text), () => frame().includes(text), ms);
  return { e, app, controller, frame, type, idle, sees };
}

describe('mgpt chat (ink)', () => {
  it('renders tokens as they stream, then the reply, the gauge and the transcript size', async () => {
    const c = await chat();
    fake.script({ text: ['Hello ', 'from ', 'the stream'], chunkDelayMs: 150 });
    await c.type('hi there\r');
    await c.sees('Hello from');
    expect(c.frame()).not.toContain('the stream');
    expect(c.frame()).toContain('replying…');
    await c.idle();
    await c.sees('Hello from the stream');
    expect(c.frame()).toContain('› hi there');
    expect(c.frame()).toMatch(/window \[[█░]{10}\] \d+\/60 tok, 2 blocks/);
    expect(c.frame()).toContain('transcript 2 msgs');
    c.app.unmount();
  });

  it('prints a many-line reply streamed in small pieces once, exactly, blank lines included', async () => {
    const c = await chat();
    const lines = Array.from({ length: 30 }, (_, i) => (i % 7 === 6 ? '' : `line ${i} of the reply`));
    const text = lines.join('\n');
    const pieces = text.match(/.{1,5}/gs)!;
    fake.script({ text: pieces, chunkDelayMs: 2 });
    await c.type('a long one\r');
    await c.idle();
    await c.sees('transcript 2 msgs');
    const frame = c.frame();
    expect(frame).toContain(`› a long one\n${text}\n`);
    expect(frame.split('line 29 of the reply')).toHaveLength(2);
    c.app.unmount();
  });

  it('shows a notice from outside the turn (a rate limit being waited out) as one of its lines, while the reply goes on', async () => {
    const c = await chat();
    fake.script({ text: ['after ', 'the wait'], chunkDelayMs: 100 });
    await c.type('hi\r');
    c.controller.notice('rate limited by the server: rate limit reached for requests per minute (rpm); retrying in 3s');
    await c.sees('retrying in 3s');
    await c.idle();
    await c.sees('after the wait');
    c.app.unmount();
  });

  it('announces a rotation with the transcript range folded into the summary', async () => {
    const c = await chat();
    for (let i = 0; i < 6 && !c.frame().includes('window rotated'); i++) {
      await c.type(`message number ${i} with enough words to fill the small window quickly\r`);
      await c.idle();
    }
    expect(c.frame()).toMatch(/window rotated: messages 1–\d+ were folded into a \d+-token summary/);
    const w = await backend.getWindow(c.e.id);
    expect(w.blocks[0].kind).toBe('summary');
    c.app.unmount();
  });

  it('says what automatic recall put in the prompt, as a notice under the reply; a reply without recall has none', async () => {
    const c = await chat();
    // Recalled lines stay in the window (counted in its budget) until folded: the suite's 60-token
    // window has no room for one, so this entity has a budget that does.
    await backend.updateEntity(c.e.id, { recall: 'auto', budget_tokens: 150 });
    await collect(engine.entities.send(c.e.id, { content: 'My sister Margaret moved to Lisbon in 2019 to teach chemistry.' }, 'local'));
    for (let i = 0; i < 16; i++) await collect(engine.entities.send(c.e.id, { content: `the weather was grey on day ${i}` }, 'local'));
    await c.type('Do you enjoy astronomy, telescopes and comets?\r');
    await c.idle();
    expect(c.frame()).not.toContain('recalled');
    await c.type('Which city is my sister Margaret living in?\r');
    await c.idle();
    await c.sees('recalled');
    expect(c.frame()).toMatch(/Which city is my sister Margaret living in\?[\s\S]*\n· recalled \d+ messages? \(#1(, #\d+)*\), \d+ tokens/);
    c.app.unmount();
  });

  it('Ctrl-C cancels a reply in flight: the screen says so and the transcript is unchanged', async () => {
    const c = await chat();
    await c.type('keep this\r');
    await c.idle();
    const before = await backend.listMessages(c.e.id);
    fake.script({ text: ['partial ', 'reply ', 'never ', 'stored'], chunkDelayMs: 200 });
    await c.type('cancel me\r');
    await c.sees('partial');
    await c.type('\x03');
    await c.sees('cancelled: nothing of this turn was stored');
    await c.idle();
    // The partial reply stays on screen, marked as cancelled.
    expect(c.frame()).toMatch(/partial .*\[cancelled\]/);
    expect(await backend.listMessages(c.e.id)).toEqual(before);
    expect(c.controller.getState().exited).toBe(false);
    // Ctrl-C with nothing running only clears the input line.
    await c.type('half typed');
    await c.type('\x03');
    expect(c.frame()).not.toContain('half typed');
    await c.type('next\r');
    await c.idle();
    expect((await backend.getEntity(c.e.id)).transcript.messages).toBe(4);
    c.app.unmount();
  });

  it('shows provider failures, a busy entity (409) and an empty balance (402) inline and keeps going', async () => {
    const c = await chat({ balance: async () => (await backend.admin.listAccounts()).find((a) => a.name === 'local')!.balanceUsd });
    fake.fallback = () => ({ status: 500, body: '{"error":{"message":"upstream down"}}' });
    await c.type('are you there?\r');
    await c.idle();
    expect(c.frame()).toMatch(/error: .*500/);
    fake.fallback = echoLastUser;

    await engine.store.leases.acquire({ subject: `entity:${c.e.id}`, owner: 'someone-else', idempotencyKey: null, contentSha256: null, expiresAt: Date.now() + 60_000 }, Date.now());
    await c.type('busy?\r');
    await c.idle();
    expect(c.frame()).toContain('is answering another message');
    await engine.store.leases.release(`entity:${c.e.id}`, 'someone-else');

    await engine.accounts.topup('local', 1e-9);
    await c.type('pay me\r');
    await c.idle();
    expect(c.frame()).toContain('error: insufficient balance');
    expect(c.frame()).toMatch(/\$0\.00/);
    sqliteOf(engine).db.prepare(`UPDATE accounts SET balance_usd = NULL WHERE id = 'local'`).run();

    await c.type('still here\r');
    await c.idle();
    await c.sees('reply: still here');
    expect((await backend.getEntity(c.e.id)).transcript.messages).toBe(2);
    c.app.unmount();
  });

  it('runs every slash command', async () => {
    const c = await chat();
    await c.type('remember the tomatoes\r');
    await c.idle();
    await c.type('/help\r');
    await c.sees('/history [n]');
    await c.type('/window\r');
    await c.idle();
    await c.sees('window: ');
    expect(c.frame()).toMatch(/#1\s+user\s+\d+ tok {2}remember the tomatoes/);
    await c.type('/history 1\r');
    await c.idle();
    await c.sees('#2 assistant: reply: remember the tomatoes');
    await c.type('/rotations\r');
    await c.idle();
    await c.sees('(no rotations yet');
    const file = join(dir, 'chat-export.json');
    await c.type(`/export ${file}\r`);
    await c.idle();
    await c.sees(`exported json to ${file}`);
    expect(JSON.parse(readFileSync(file, 'utf8')).manifest.entity.id).toBe(c.e.id);
    await c.type(`/export ${file}\r`);
    await c.idle();
    expect(c.controller.getState().items.at(-1)).toMatchObject({ kind: 'error', text: `${file} already exists`, hint: `/export -f ${file} overwrites it` });
    await c.sees(`error: ${file} already exists`);
    expect(c.frame()).not.toContain('EEXIST');
    await c.type('/new bob\r');
    await c.idle();
    await c.sees('new entity bob');
    expect(c.controller.getState().status).toMatchObject({ label: 'bob', transcript: { messages: 0 } });
    await c.type('/switch\r');
    await c.idle();
    await c.sees('switch with /switch ID');
    await c.type(`/switch ${c.e.name}\r`);
    await c.idle();
    await c.sees(`switched to entity ${c.e.name}`);
    expect(c.controller.getState().status.transcript?.messages).toBe(2);
    // A unique id prefix of 4+ characters switches too (the backend resolves it).
    await c.type('/new carol\r');
    await c.idle();
    await c.type(`/switch ${c.e.id.slice(0, 6)}\r`);
    await c.idle();
    await c.sees(`switched to entity ${c.e.name}`);
    expect(c.controller.getState().status.id).toBe(c.e.id);
    await c.type('/nope\r');
    await c.sees('unknown command /nope');
    await c.type('/exit\r');
    await until('exit', () => c.controller.getState().exited);
    expect(existsSync(file)).toBe(true);
    c.app.unmount();
  });

  it('echoes slash commands, queues a line entered during a reply, and Ctrl-D mid-reply cancels before leaving', async () => {
    const c = await chat();
    await c.type('/history 1\r');
    await c.idle();
    await c.sees('› /history 1');
    fake.script({ text: ['slow ', 'first ', 'reply'], chunkDelayMs: 150 });
    await c.type('first\r');
    await c.sees('slow');
    await c.type('second\r');
    await c.sees('queued: sent when the reply ends');
    await until('both turns', () => c.frame().includes('reply: second') && !c.controller.getState().busy);
    const stored = (await backend.listMessages(c.e.id)).data.map((m) => m.content);
    expect(stored).toEqual(['first', 'slow first reply', 'second', 'reply: second']);

    fake.script({ text: ['never ', 'kept ', 'at ', 'all'], chunkDelayMs: 200 });
    await c.type('third\r');
    await c.sees('never');
    await c.type('\x04');
    await until('exit', () => c.controller.getState().exited);
    await c.controller.settled();
    // Everything written, not just the last frame: under CI=true ink writes the transcript as it grows.
    expect(c.app.frames.join('\n')).toContain('cancelled: nothing of this turn was stored');
    expect(c.controller.getState().items.at(-1)).toMatchObject({ kind: 'notice', text: 'cancelled: nothing of this turn was stored' });
    expect((await backend.listMessages(c.e.id)).data).toHaveLength(4);
    c.app.unmount();
  });

  it('/export -f overwrites, ~ is the home directory, a missing directory is said plainly', async () => {
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    const c = await chat({ home });
    await c.type('to be exported\r');
    await c.idle();
    writeFileSync(join(home, 'kept.json'), 'old contents');
    await c.type('/export ~/kept.json\r');
    await c.idle();
    expect(c.controller.getState().items.at(-1)).toMatchObject({ kind: 'error', text: `${join(home, 'kept.json')} already exists`, hint: '/export -f ~/kept.json overwrites it' });
    await c.sees('already exists');
    expect(readFileSync(join(home, 'kept.json'), 'utf8')).toBe('old contents');
    await c.type('/export -f ~/kept.json\r');
    await c.idle();
    await c.sees(`exported json to ${join(home, 'kept.json')}`);
    expect(JSON.parse(readFileSync(join(home, 'kept.json'), 'utf8')).manifest.entity.id).toBe(c.e.id);
    await c.type('/export ~/no/such/dir/x.tar\r');
    await c.idle();
    expect(c.controller.getState().items.at(-1)).toMatchObject({ kind: 'error', text: `no directory ${join(home, 'no', 'such', 'dir')}`, hint: 'create it first, or export to another path' });
    await c.sees('error: no directory');
    expect(c.frame()).not.toContain('ENOENT');
    expect(existsSync(join(home, 'no'))).toBe(false);
    c.app.unmount();
  });

  it('/history shows a reply without the escape sequences it holds', async () => {
    const c = await chat();
    // The fake replies with the message. (Sent past the editor, which takes ESC as a key.)
    for await (const _ of backend.sendMessage(c.e.id, { content: 'osc \x1b]52;c;b3duZWQ=\x07title\x1b]0;owned\x07 end' }));
    await c.type('/history 1\r');
    await c.idle();
    await c.sees('#2 assistant: reply: osc title end');
    expect(c.frame()).not.toMatch(/\x07|\]52;|\]0;/);
  });

  it('/history on a terminal says when each message was written', async () => {
    let now = Date.now();
    const c = await chat({ humanTimes: true, now: () => now });
    await c.type('an old message\r');
    await c.idle();
    now += 3 * 60_000 + 5_000;
    await c.type('/history 2\r');
    await c.idle();
    await c.sees('#1 user (3 min ago): an old message');
    await c.sees('#2 assistant (3 min ago): reply: an old message');
    c.app.unmount();
  });

  // Typed one at a time, or read as one chunk (typed ahead, or a busy machine): the same two keys.
  for (const [how, keys] of [['one at a time', ['\x03', '\x04']], ['in one read', ['\x03\x04']]] as const) {
    it(`Ctrl-C clears a recalled line and Ctrl-D then leaves (${how}); up recalls the last input`, async () => {
      const c = await chat();
      await c.type('first line\r');
      await c.idle();
      await c.type('\x1b[A');
      expect(c.frame()).toMatch(/› first line\s*$/);
      for (const k of keys) await c.type(k);
      await until('exit', () => c.controller.getState().exited);
      c.app.unmount();
    });
  }

  it('edits the input line with the readline keys', async () => {
    const c = await chat();
    const line = () => c.frame().split('\n').at(-1)!.trimEnd();
    await c.type('helo');
    await c.type('\x01'); // Ctrl-A
    await c.type('X');
    expect(line()).toBe('› Xhelo');
    await c.type('\x05'); // Ctrl-E
    await c.type('\x02'); // Ctrl-B twice: before "lo"
    await c.type('\x02');
    await c.type('l');
    expect(line()).toBe('› Xhello');
    await c.type('\x06'); // Ctrl-F
    await c.type('\x1b[3~'); // Delete: the "o" under the cursor goes
    expect(line()).toBe('› Xhell');
    await c.type('\x7f'); // Backspace still deletes back
    expect(line()).toBe('› Xhel');
    await c.type(' big world');
    await c.type('\x17'); // Ctrl-W
    expect(line()).toBe('› Xhel big');
    await c.type('\x1bb'); // Alt-B: before "big"
    await c.type('\x0b'); // Ctrl-K
    expect(line()).toBe('› Xhel');
    await c.type('\x1b[H'); // Home
    await c.type('\x1bf'); // Alt-F: after "Xhel"
    await c.type('p!');
    expect(line()).toBe('› Xhelp!');
    await c.type('\x1b[D'); // Left twice
    await c.type('\x1b[D');
    await c.type('\x15'); // Ctrl-U
    expect(line()).toBe('› p!');
    await c.type('\x1b[F'); // End
    await c.type('\r');
    await c.idle();
    await c.sees('reply: p!');
    c.app.unmount();
  });

  it('Tab completes slash commands, and entity names and short ids after /switch', async () => {
    const c = await chat();
    const other = await backend.createEntity({ model: 'mgpt-1-27b', name: `zq-tab-${c.e.name}` });
    const line = () => c.frame().split('\n').filter((l) => l.startsWith('› ')).at(-1)!.trimEnd();
    await c.type('/he');
    await c.type('\t');
    await until('the completed command', () => line() === '› /help');
    await c.type('\x15'); // Ctrl-U
    await c.type('/switch zq-t');
    await c.type('\t');
    await until('the completed name', () => line() === `› /switch ${other.name}`);
    await c.type('\r');
    await c.idle();
    await c.sees(`switched to entity ${other.name}`);
    await c.type(`/switch ${c.e.id.slice(0, 4)}`);
    await c.type('\t');
    await until('the short id', () => line() === `› /switch ${c.e.id.slice(0, 8)}`);
    await c.type('\r');
    await c.idle();
    expect(c.controller.getState().status.id).toBe(c.e.id);
    // Several fit: the line grows to what they share and the choices are shown under it.
    await c.type('/e');
    await c.type('\t');
    await until('the choices', () => c.frame().includes('/exit  /export'));
    expect(line()).toBe('› /ex');
    c.app.unmount();
  });

  for (const columns of [80, 60]) {
    it(`keeps the status line on one line of at most ${columns} columns while a reply streams, with the model`, async () => {
      const c = await chat();
      Object.defineProperty(c.app.stdout, 'columns', { get: () => columns, configurable: true });
      c.app.stdout.emit('resize');
      const from = c.app.frames.length;
      fake.script({ text: ['a ', 'streamed ', 'reply ', 'in ', 'parts'], chunkDelayMs: 60 });
      await c.type('a message long enough to matter\r');
      await c.sees('a streamed');
      await c.idle();
      await c.sees('a streamed reply in parts');
      const frames = c.app.frames.slice(from);
      let busyFrames = 0;
      for (const frame of frames) {
        const lines = frame.split('\n');
        const at = lines.findIndex((l) => l.startsWith(`${c.e.name} · `));
        expect(at, frame).toBeGreaterThanOrEqual(0);
        const status = lines[at];
        expect([...status].length, status).toBeLessThanOrEqual(columns);
        expect(status).toContain(' · mgpt-1-27b · local · ');
        // The line under the status line is the input: the status did not wrap.
        expect(lines[at + 1], frame).toMatch(/^›( |$)/);
        if (status.includes('replying…')) busyFrames++;
      }
      expect(busyFrames).toBeGreaterThan(0);
      c.app.unmount();
    });
  }

  it('universe chat asks the person for a tool result, then continues the turn', async () => {
    const universe = await backend.createUniverse({ storedPrompt: 'narrator' });
    const controller = new ChatController({
      backend,
      admin: backend.admin,
      target: { kind: 'universe', id: universe.universe },
      tools: [{ type: 'function', name: 'roll' }] as never,
    });
    const app = render(<ChatApp controller={controller} />);
    await controller.start();
    fake.script({ toolCalls: [{ id: 'r1', name: 'roll', arguments: '{"sides":6}' }] }, { text: 'You rolled a four.' });
    app.stdin.write('roll a die\r');
    await until('the tool prompt', () => (app.lastFrame() ?? '').includes('roll result ›'));
    expect(app.lastFrame()).toContain('tool call roll({"sides":6})');
    app.stdin.write('{"value":4}\r');
    await until('the reply', () => (app.lastFrame() ?? '').includes('You rolled a four.'));
    const sent = fake.requests.at(-1)!.body.messages;
    expect(sent.find((m: any) => m.role === 'tool')).toMatchObject({ tool_call_id: 'r1', content: '{"value":4}' });
    app.unmount();
  });
});

describe('mgpt chat with a universe and --tool-exec', () => {
  it('runs each tool call through the runner and continues the turn with the results', async () => {
    const universe = await backend.createUniverse({ storedPrompt: 'narrator' });
    const ran: string[] = [];
    const controller = new ChatController({
      backend,
      admin: backend.admin,
      target: { kind: 'universe', id: universe.universe },
      tools: [{ type: 'function', name: 'roll' }, { type: 'function', name: 'look' }] as never,
      runTool: async (call) => {
        ran.push(call.name);
        return { callId: call.callId, name: call.name, ok: true, output: { value: call.name === 'roll' ? 6 : 'a door' } };
      },
    });
    const app = render(<ChatApp controller={controller} />);
    await controller.start();
    fake.script({ toolCalls: [{ id: 'c1', name: 'roll', arguments: '{}' }, { id: 'c2', name: 'look', arguments: '{}' }] }, { text: 'A six, and a door.' });
    app.stdin.write('act\r');
    await until('the reply', () => (app.lastFrame() ?? '').includes('A six, and a door.'));
    expect(ran).toEqual(['roll', 'look']);
    expect(app.lastFrame()).toContain('roll → {"value":6}');
    const tools = fake.requests.at(-1)!.body.messages.filter((m: any) => m.role === 'tool');
    expect(tools.map((m: any) => [m.tool_call_id, m.content])).toEqual([['c1', '{"value":6}'], ['c2', '{"value":"a door"}']]);
    expect(controller.getState().status.transcript?.messages).toBe(2 + 2 + 1);
    app.unmount();
  });
});

describe('one wrapping rule for tool outputs that are not JSON objects', () => {
  /** A universe turn with two tool calls, answered by `answer` (typed, or run by --tool-exec). */
  async function toolTurn(runTool?: ChatOptions['runTool']) {
    const universe = await backend.createUniverse({ storedPrompt: 'narrator' });
    const controller = new ChatController({
      backend,
      admin: backend.admin,
      target: { kind: 'universe', id: universe.universe },
      tools: [{ type: 'function', name: 'roll' }, { type: 'function', name: 'look' }] as never,
      runTool,
    });
    await controller.start();
    fake.script({ toolCalls: [{ id: 'n1', name: 'roll', arguments: '{}' }, { id: 'n2', name: 'look', arguments: '{}' }] }, { text: 'Six, dark.' });
    return controller;
  }
  const toolMessages = () => fake.requests.at(-1)!.body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content);
  const WRAPPED = ['{"value":6}', '{"text":"too dark"}'];

  it('the REPL wraps what the person types as respond --tool-exec wraps a tool command\'s stdout', async () => {
    const controller = await toolTurn();
    await controller.submit('roll and look');
    expect(controller.getState().pendingTools.map((c) => c.name)).toEqual(['roll', 'look']);
    await controller.submit('6');
    await controller.submit('too dark');
    expect(controller.getState().items.at(-1)).toMatchObject({ kind: 'assistant', text: 'Six, dark.' });
    expect(toolMessages()).toEqual(WRAPPED);
  });

  it('the REPL with --tool-exec (the same runner respond uses) sends the same outputs', async () => {
    const script = join(dir, 'plain-tool.sh');
    writeFileSync(script, `#!/bin/sh\ncase "$(cat)" in *'"roll"'*) echo 6;; *) echo "too dark";; esac\n`, { mode: 0o755 });
    const controller = await toolTurn((call) => execTool(script, call));
    await controller.submit('roll and look');
    expect(controller.getState().items.at(-1)).toMatchObject({ kind: 'assistant', text: 'Six, dark.' });
    expect(toolMessages()).toEqual(WRAPPED);
  });
});

describe('notices said once a session (issue 37, item 8)', () => {
  it('says a reply was cut once, not on every turn', async () => {
    const cutLimit = () => ({ maxTokens: 3, source: "profile small's models.mgpt-1-27b.maxTokens", raise: 'mgpt config set --profile small models.mgpt-1-27b.maxTokens N' });
    const c = await chat({ cutLimit });
    for (const text of ['one', 'two']) {
      fake.script({ text: `${text} reply`, finishReason: 'length', usage: { prompt_tokens: 5, completion_tokens: 3 } });
      await c.type(`${text}\r`);
      await c.idle();
    }
    const cuts = c.controller.getState().items.filter((i) => i.kind === 'notice' && /reply cut/.test(i.text));
    expect(cuts).toHaveLength(1);
    expect(cuts[0]).toMatchObject({ text: expect.stringContaining('mgpt config set --profile small models.mgpt-1-27b.maxTokens N') });
    c.app.unmount();
  });
});

describe('the status line says who answers (issue 37, item 6)', () => {
  it("shows the route's provider and model beside the entity's model", async () => {
    const c = await chat({ route: (model) => (model === 'mgpt-1-27b' ? 'openai fake-model' : undefined) });
    expect(c.controller.getState().status.route).toBe('openai fake-model');
    await c.sees('mgpt-1-27b → openai fake-model');
    c.app.unmount();
  });
});
