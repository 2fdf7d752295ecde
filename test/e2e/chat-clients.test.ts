import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, mgpt, spawnMgpt } from '../helpers/cli.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Each chat client's requests, as recorded from its own source in test/fixtures/clients/ (with
 * the version and the files they came from), replayed against the real `mgpt serve`: a 10-turn
 * chat with the client's default system message, its side requests (title, tags, follow-ups), a
 * regenerate, a stop mid-stream and an edit, then a second chat on the same entity. Every request
 * must answer 2xx, and the entity's transcript must hold each user turn once, in order.
 */
interface Render {
  placeholder: string;
  last?: number;
  first?: number;
  usersOnly?: boolean;
  user: string;
  assistant: string;
  join: string;
  maxChars?: number;
}
interface Side {
  name: string;
  when: 'first' | 'every';
  template: string;
  render: Render;
  stream: boolean;
  fields: Record<string, unknown>;
}
interface Fixture {
  client: string;
  version: string;
  sources: Array<{ repo: string; commit: string; file: string; what: string }>;
  chat: { system: string | null; stream: boolean; fields: Record<string, unknown>; headers: Record<string, string> };
  side: Side[];
}
type Msg = { role: 'system' | 'user' | 'assistant'; content: string };

const FIXTURES = new URL('../fixtures/clients/', import.meta.url);
const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ id: f.replace(/\.json$/, ''), ...(JSON.parse(readFileSync(new URL(f, FIXTURES), 'utf8')) as Fixture) }));

const dir = tempDir('mgpt-clients-');
const env = cliEnv(dir);
let fake: FakeOpenAI;
let server: ReturnType<typeof spawnMgpt>;
let url: string;
let key: string;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  const added = await mgpt(['models', 'add', 'fake', '--provider', 'openai', '--base-url', fake.url, '--model', 'fake', '--route', 'mgpt-1-27b'], env);
  expect(added.code, added.stderr).toBe(0);
  key = (await mgpt(['keys', 'create', '--account', 'local', '--scopes', 'mgpt.responses:create'], env)).stdout.trim();
  server = spawnMgpt(['serve', '--port', '0'], env);
  url = await firstLine(server);
});
afterAll(async () => {
  server?.kill('SIGTERM');
  await server?.result;
  await fake?.close();
});

function firstLine(child: ReturnType<typeof spawnMgpt>): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.trim());
    });
    void child.result.then((r) => reject(new Error(`mgpt serve exited: ${r.stderr}`)));
  });
}

/** The conversation as the client renders it into a side request's template. */
function render(r: Render, history: Msg[]): string {
  const chat = history.filter((m) => m.role !== 'system' && (!r.usersOnly || m.role === 'user'));
  const picked = r.last !== undefined ? chat.slice(-r.last) : chat.slice(0, r.first);
  return picked.map((m) => `${m.role === 'user' ? r.user : r.assistant}${r.maxChars ? m.content.slice(0, r.maxChars) : m.content}`).join(r.join);
}

/** Reads an SSE body to its end (or, with `stopAfterFirst`, aborts after the first text), returning the text. */
async function readStream(res: Response, abort?: AbortController): Promise<string> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  let text = '';
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
    if (done) return text;
    buf += dec.decode(value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i).replace(/^data: /, '');
      buf = buf.slice(i + 2);
      if (frame === '[DONE]') continue;
      const chunk = JSON.parse(frame);
      expect(chunk.error, JSON.stringify(chunk.error)).toBeUndefined();
      text += chunk.choices?.[0]?.delta?.content ?? '';
      if (abort && text) {
        abort.abort();
        return text;
      }
    }
  }
}

/** One client chat: what it shows, and what it sends. */
class ClientChat {
  history: Msg[] = [];
  constructor(
    private readonly f: Fixture,
    private readonly model: string,
  ) {}

  private messages(history: Msg[]): Msg[] {
    return this.f.chat.system ? [{ role: 'system', content: this.f.chat.system }, ...history] : history;
  }

  async post(messages: Msg[], stream: boolean, fields: Record<string, unknown>, abort?: AbortController): Promise<{ turn: string | null; text: string }> {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...this.f.chat.headers },
      body: JSON.stringify({ model: this.model, messages, stream, ...fields }),
      signal: abort?.signal,
    });
    expect(res.status, await (res.ok ? '' : res.clone().text())).toBe(200);
    const turn = res.headers.get('mgpt-turn');
    const text = stream ? await readStream(res, abort) : (await res.json()).choices[0].message.content;
    return { turn, text };
  }

  /** The user sends a message; the client shows the reply (as far as it came). */
  async send(content: string, opts: { stop?: boolean } = {}): Promise<string | null> {
    const history = [...this.history, { role: 'user' as const, content }];
    const abort = opts.stop ? new AbortController() : undefined;
    const r = await this.post(this.messages(history), this.f.chat.stream, this.f.chat.fields, abort);
    this.history = [...history, { role: 'assistant', content: r.text }];
    return r.turn;
  }

  /** Regenerate: the history without the last reply; the new reply replaces it. */
  async regenerate(): Promise<string | null> {
    const history = this.history.slice(0, -1);
    const r = await this.post(this.messages(history), this.f.chat.stream, this.f.chat.fields);
    this.history = [...history, { role: 'assistant', content: r.text }];
    return r.turn;
  }

  /** Edits the user message `back` turns from the end (1 = the last); the client's original branch stays as it was. */
  async edit(back: number, content: string): Promise<string | null> {
    const at = this.history.length - 2 * back;
    const r = await this.post(this.messages([...this.history.slice(0, at), { role: 'user', content }]), this.f.chat.stream, this.f.chat.fields);
    return r.turn;
  }

  async side(s: Side): Promise<string | null> {
    const content = s.template.replace(s.render.placeholder, render(s.render, this.history));
    return (await this.post([{ role: 'user', content }], s.stream, s.fields)).turn;
  }

  async sides(first: boolean): Promise<void> {
    for (const s of this.f.side.filter((x) => x.when === 'every' || first)) expect(await this.side(s), s.name).toBe('side');
  }
}

async function api(path: string, init: RequestInit = {}): Promise<any> {
  const res = await fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
  expect(res.status, path).toBeLessThan(300);
  return res.json();
}

async function userTurns(id: string): Promise<string[]> {
  const page = await api(`/v1/entities/${id}/messages?limit=200`);
  return page.data.filter((m: Msg) => m.role === 'user').map((m: Msg) => m.content);
}

/** Waits for the transcript to hold `n` user messages (a stopped reply is stored once the server has read the stop). */
async function untilTurns(id: string, n: number): Promise<void> {
  for (let i = 0; i < 200 && (await userTurns(id)).length < n; i++) await new Promise((r) => setTimeout(r, 25));
}

describe.each(fixtures)('$client ($version)', (f) => {
  it('records where each request comes from', () => {
    for (const s of f.sources) expect(s).toEqual({ repo: expect.stringMatching(/^[\w.-]+\/[\w.-]+$/), commit: expect.stringMatching(/^[0-9a-f]{40}$/), file: expect.any(String), what: expect.any(String) });
  });

  it('a 10-turn chat (side requests, regenerate, stop, edit), then a second chat: all 2xx, each user turn stored once, in order', async () => {
    const entity = await api('/v1/entities', { method: 'POST', body: JSON.stringify({ model: 'mgpt-1-27b', name: f.id, instructions: 'You are a patient tutor.' }) });
    const model = `entity:${f.id}`;
    const said: string[] = [];
    const a = new ClientChat(f, model);
    const say = async (chat: ClientChat, text: string, opts: { stop?: boolean } = {}) => {
      said.push(text);
      expect(await chat.send(text, opts), text).toBe('stored');
    };
    for (let turn = 1; turn <= 10; turn++) {
      if (turn === 5) {
        // The user stops the reply after its first words; the client keeps them.
        let release!: () => void;
        fake.script({ text: ['Partly ', 'said ', 'and cut.'], holdAfterFirst: new Promise<void>((r) => (release = r)) });
        await say(a, `${f.id}: message ${turn}`, { stop: true });
        await untilTurns(entity.id, said.length);
        release();
      } else {
        await say(a, `${f.id}: message ${turn}`);
      }
      await a.sides(turn === 1);
      if (turn === 3) expect(await a.regenerate()).toBe('regenerated');
      if (turn === 8) expect(await a.edit(1, `${f.id}: message 8, edited`)).toBe('stateless');
    }
    // A new chat in the client on the same entity: its history starts empty.
    const b = new ClientChat(f, model);
    for (let turn = 1; turn <= 3; turn++) {
      await say(b, `${f.id}: second chat ${turn}`);
      await b.sides(turn === 1);
    }
    expect(await userTurns(entity.id)).toEqual(said);
    const stored = (await api(`/v1/entities/${entity.id}/messages?limit=200`)).data as Msg[];
    expect(stored.find((m) => m.content.startsWith('Partly'))?.content).toBe('Partly ');
  });

  it("the client's system message and sampling fields reach the model with the entity's instructions first", () => {
    const last = fake.requests.find((r) => r.body.messages?.at(-1)?.content === `${f.id}: second chat 3`)?.body;
    expect(last).toBeDefined();
    if (f.chat.system) expect(last.messages[0].content).toBe(`You are a patient tutor.\n\n${f.chat.system}`);
    for (const field of ['temperature', 'tools'] as const) if (f.chat.fields[field] !== undefined) expect(last[field]).toEqual(f.chat.fields[field]);
  });
});
