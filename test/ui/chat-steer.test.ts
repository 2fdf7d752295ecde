import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalBackend } from '../../src/backends/local.js';
import type { Engine } from '../../src/engine/engine.js';
import { ChatController, HELP } from '../../src/ui/chat-controller.js';
import { complete } from '../../src/ui/completion.js';
import { makeEngine } from '../helpers/engine.js';
import { type FakeOpenAI, echoLastUser, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

// The REPL's steering commands: /memory, /instructions, /model, /rotate, /undo and /retry, each a
// thin call of what the CLI's verbs call, seen in what the next turn's prompt holds.
const dir = tempDir('mgpt-chat-steer-');
let fake: FakeOpenAI;
let engine: Engine;
let backend: LocalBackend;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  mkdirSync(join(dir, 'prompts'));
  writeFileSync(join(dir, 'prompts', 'narrator.md'), 'You narrate.\n');
  engine = makeEngine(dir, { fake, windowBudget: 120, promptsDir: join(dir, 'prompts') });
  backend = new LocalBackend(engine);
});
afterAll(async () => {
  engine.close();
  await fake.close();
});

async function entityChat() {
  const e = await backend.createEntity({ model: 'mgpt-1-27b', name: `s${Math.random().toString(36).slice(2, 8)}`, instructions: 'Be kind.' });
  const c = new ChatController({ backend, admin: backend.admin, target: { kind: 'entity', id: e.id } });
  await c.start();
  const last = () => c.getState().items.at(-1)!;
  const say = async (line: string) => {
    await c.submit(line);
    return last();
  };
  return { e, c, say };
}

/** The system text of the newest provider request. */
const lastSystem = () => {
  const messages = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
  return messages.filter((m) => m.role === 'system').map((m) => String(m.content)).join('\n');
};

describe('steering commands in the REPL', () => {
  it('/memory sets, shows, lists and removes pinned blocks, and the next prompt follows', async () => {
    const { e, say } = await entityChat();
    expect(await say('/memory')).toMatchObject({ kind: 'output', text: expect.stringContaining('no pinned memory') });
    expect(await say('/memory likes  tea, not coffee')).toMatchObject({ kind: 'output', text: expect.stringContaining('set memory block likes') });
    expect((await backend.getMemory(e.id, 'likes')).text).toBe('tea, not coffee');
    expect(await say('/memory likes')).toMatchObject({ kind: 'output', text: expect.stringMatching(/^likes \(\d+ tokens\)\ntea, not coffee$/) });
    expect((await say('/memory')).text).toMatch(/pinned memory: \d+ of [\d,]+ tokens in 1 of \d+ blocks\nlikes +\d+ tok  tea, not coffee/);
    await say('hello');
    expect(lastSystem()).toContain('tea, not coffee');
    expect(await say('/memory rm likes')).toMatchObject({ kind: 'output', text: expect.stringContaining('removed memory block likes') });
    await say('again');
    expect(lastSystem()).not.toContain('tea, not coffee');
    expect(await say('/memory rm')).toMatchObject({ kind: 'error', exitCode: 2 });
    expect(await say('/memory rm nothing-here')).toMatchObject({ kind: 'error', exitCode: 4 });
  });

  it('/instructions shows and replaces them for the next turn', async () => {
    const { say } = await entityChat();
    expect(await say('/instructions')).toMatchObject({ kind: 'output', text: 'Be kind.' });
    expect(await say('/instructions Answer in French.')).toMatchObject({ kind: 'output', text: expect.stringContaining('instructions replaced') });
    await say('bonjour');
    expect(lastSystem()).toContain('Answer in French.');
    expect(lastSystem()).not.toContain('Be kind.');
  });

  it('/rotate folds now and /undo brings the messages back live, said as mgpt rotate says it', async () => {
    const { e, say } = await entityChat();
    for (let i = 0; i < 3; i++) await say(`note ${i}: the long voyage`);
    const before = (await backend.getWindow(e.id)).blocks.length;
    expect((await say('/rotate')).text).toMatch(/^folded seqs 1-\d+ into a summary of \d+ tokens \(openai:fake-model\); window now \d+ blocks/);
    expect((await backend.getWindow(e.id)).blocks[0].kind).toBe('summary');
    expect((await say('/undo')).text).toMatch(/^undone: the rotation that folded seqs 1-\d+; window now \d+ blocks/);
    expect((await backend.getWindow(e.id)).blocks).toHaveLength(before);
  });

  it('/retry sends again the message whose turn failed, and only that', async () => {
    const { e, say } = await entityChat();
    expect(await say('/retry')).toMatchObject({ kind: 'error', text: expect.stringContaining('nothing to retry') });
    fake.script({ status: 500, body: '{"error":{"message":"boom"}}' });
    expect(await say('the question')).toMatchObject({ kind: 'error' });
    expect((await backend.getEntity(e.id)).transcript.messages).toBe(0);
    fake.fallback = echoLastUser;
    await say('/retry');
    const { data } = await backend.listMessages(e.id);
    expect(data.map((m) => m.content)).toEqual(['the question', 'reply: the question']);
    expect(await say('/retry')).toMatchObject({ kind: 'error', text: expect.stringContaining('nothing to retry') });
  });

  it('/model says who answers; an entity keeps its model, a universe switches its alias', async () => {
    const { say } = await entityChat();
    expect(await say('/model')).toMatchObject({ kind: 'output', text: expect.stringMatching(/^model mgpt-1-27b/) });
    expect(await say('/model other')).toMatchObject({ kind: 'error', exitCode: 2, text: expect.stringContaining('fixed for its life') });
    const u = await backend.createUniverse({ storedPrompt: 'narrator' });
    const c = new ChatController({ backend, admin: backend.admin, target: { kind: 'universe', id: u.universe } });
    await c.start();
    await c.submit('/model agent-1-lite-frozen');
    expect(c.getState().items.at(-1)).toMatchObject({ kind: 'output', text: 'the next turns use agent-1-lite-frozen' });
    await c.submit('/model nope');
    expect(c.getState().items.at(-1)).toMatchObject({ kind: 'error', exitCode: 2 });
    await c.submit('once upon a time');
    expect((await backend.listLogs({ page: 1, pageSize: 1 })).data[0].model).toBe('agent-1-lite-frozen');
    await c.submit('/memory');
    expect(c.getState().items.at(-1)).toMatchObject({ kind: 'error', exitCode: 2, text: expect.stringContaining('for entities') });
  });

  it('are in /help and complete with Tab', () => {
    expect(complete('/r')).toMatchObject({ candidates: ['/retry', '/rotate', '/rotations'] });
    for (const cmd of ['/memory', '/instructions', '/model', '/rotate', '/undo', '/retry']) {
      expect(HELP).toContain(cmd);
      expect(complete(cmd)).toEqual({ text: `${cmd} `, candidates: [] });
    }
  });
});
