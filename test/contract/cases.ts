import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnEvent } from '../../src/core/wire/entity-types.js';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PaymentRequiredError,
  ProviderError,
} from '../../src/core/errors.js';
import { readTar } from '../../src/core/archive/tar.js';
import { loadTokenEstimator } from '../../src/core/text/tokens.js';
import { checkWindowInvariant } from '../../src/core/window-plan.js';
import { type FakeOpenAI, echoLastUser, isSummaryRequest, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';
import { CONTRACT_LIMITS, type ContractTarget, PROMPT_TEXT } from './harness.js';

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
async function bytes(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return Buffer.concat(parts);
}
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const done = (events: TurnEvent[]) => events.find((e) => e.type === 'done') as Extract<TurnEvent, { type: 'done' }>;

/**
 * Every entity and universe behaviour of issues 2 and 3, through the Backend interface. The same
 * cases run against the local backend and the remote one talking to mgpt serve: both must pass.
 */
export function contractSuite(name: string, make: (dir: string, fake: FakeOpenAI) => Promise<ContractTarget>): void {
  describe(`contract: ${name}`, () => {
    const dir = tempDir(`mgpt-contract-${name}-`);
    let fake: FakeOpenAI;
    let t: ContractTarget;
    beforeAll(async () => {
      fake = await startFakeOpenAI();
      t = await make(dir, fake);
    });
    afterAll(async () => {
      await t.close();
      await fake.close();
    });
    const b = () => t.backend;
    /** The provider fails every call while `fn` runs: the remote client's retries fail too. */
    const failing = async <T>(fn: () => Promise<T>, reply = { status: 500 }) => {
      fake.fallback = () => reply;
      try {
        return await fn();
      } finally {
        fake.fallback = echoLastUser;
      }
    };
    const entity = async (instructions = 'Be kind.') => (await b().createEntity({ model: 'mgpt-1-27b', instructions })).id;
    const send = (id: string, content: string, idempotencyKey?: string) => collect(b().sendMessage(id, { content, idempotencyKey }));

    describe('entities', () => {
      it('create, get, list and delete with the seed shapes', async () => {
        const e = await b().createEntity({ model: 'mgpt-1-27b', name: 'ada', instructions: 'Be kind.' });
        expect(e).toMatchObject({ object: 'entity', entity_id: e.id, name: 'ada', state: 'none', read_only: false, window: { budget_tokens: CONTRACT_LIMITS.windowBudget, tokens: 0, blocks: 0 } });
        expect(await b().getEntity(e.id)).toMatchObject({ id: e.id, transcript: { messages: 0, tokens: 0 } });
        const list = await b().listEntities();
        expect(list.object).toBe('list');
        expect(list.data.find((x) => x.id === e.id)?.window).toEqual({ budget_tokens: CONTRACT_LIMITS.windowBudget });
        expect(await b().deleteEntity(e.id)).toEqual({ id: e.id, object: 'entity', deleted: true });
        await expect(b().getEntity(e.id)).rejects.toBeInstanceOf(NotFoundError);
        await expect(b().deleteEntity(e.id)).rejects.toBeInstanceOf(NotFoundError);
      });

      it('resolves an entity by name, by a unique id prefix of 4+ characters, and lists the candidates of an ambiguous one', async () => {
        const a = await b().createEntity({ model: 'mgpt-1-27b', name: 'resolve-me' });
        expect((await b().resolveEntity('resolve-me')).id).toBe(a.id);
        expect((await b().resolveEntity(a.id.slice(0, 6))).id).toBe(a.id);
        expect((await b().resolveEntity(a.id.slice(0, 6).toUpperCase())).id).toBe(a.id);
        expect((await b().resolveEntity(a.id)).id).toBe(a.id);
        await expect(b().resolveEntity(a.id.slice(0, 3))).rejects.toBeInstanceOf(NotFoundError);
        await expect(b().resolveEntity('no-such-name')).rejects.toBeInstanceOf(NotFoundError);
        // A create never makes a second entity of a name (409 from every backend); a rename still can.
        await expect(b().createEntity({ model: 'mgpt-1-27b', name: 'resolve-me' })).rejects.toMatchObject({ message: 'an entity named "resolve-me" already exists' });
        await expect(b().createEntity({ model: 'mgpt-1-27b', name: 'resolve-me' })).rejects.toBeInstanceOf(ConflictError);
        const twin = await b().createEntity({ model: 'mgpt-1-27b', name: 'resolve-twin' });
        await b().updateEntity(twin.id, { name: 'resolve-me' });
        const err = await b().resolveEntity('resolve-me').catch((x) => x);
        expect(err).toBeInstanceOf(BadRequestError);
        expect(err.message).toBe('"resolve-me" names 2 entities');
        expect(err.hint).toContain(twin.id.slice(0, 8));
        expect(err.hint).toContain(a.id.slice(0, 8));
      });

      it('refuses unknown fields on create in the same words, creating nothing', async () => {
        const count = (await b().listEntities()).data.length;
        const err = await b().createEntity({ model: 'mgpt-1-27b', name: 'x', colour: 'red' } as never).catch((e) => e);
        expect(err).toBeInstanceOf(BadRequestError);
        expect(err.message).toBe('unknown fields: colour; a create takes model, name, instructions, budget_tokens, cap_tokens, recall, recall_tokens, memory_tool');
        expect((await b().listEntities()).data.length).toBe(count);
      });

      it('rejects an unsupported model, a long name and missing content with 400', async () => {
        await expect(b().createEntity({ model: 'gpt-4o' })).rejects.toBeInstanceOf(BadRequestError);
        await expect(b().createEntity({ model: 'mgpt-1-27b', name: 'n'.repeat(201) })).rejects.toBeInstanceOf(BadRequestError);
        const id = await entity();
        await expect(send(id, '')).rejects.toBeInstanceOf(BadRequestError);
        await expect(send(id, 'word '.repeat(400))).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/larger than the window budget/) });
      });

      it('streams a turn: start, deltas, done; instructions first, then the window', async () => {
        const id = await entity('You are Ada.');
        fake.script({ text: ['Hello', ' Bob'], usage: { prompt_tokens: 9, completion_tokens: 2 } });
        const events = await send(id, 'I am Bob');
        expect(events.map((e) => e.type)).toEqual(['start', 'delta', 'delta', 'done']);
        const c = done(events).completion;
        expect(c).toMatchObject({ object: 'chat.completion', model: 'mgpt-1-27b', entity_id: id, usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } });
        expect(c.choices[0].message).toEqual({ role: 'assistant', content: 'Hello Bob' });
        expect(events[0]).toMatchObject({ type: 'start', id: c.id });
        await send(id, 'Remember me?');
        expect(fake.requests.at(-1)!.body.messages).toEqual([
          { role: 'system', content: 'You are Ada.' },
          { role: 'user', content: 'I am Bob' },
          { role: 'assistant', content: 'Hello Bob' },
          { role: 'user', content: 'Remember me?' },
        ]);
      });

      it('pages the transcript and shows the window; rotation keeps the invariant', async () => {
        const id = await entity();
        for (let i = 0; i < 10; i++) await send(id, `message ${i} with a handful of words to fill the window`);
        const page = await b().listMessages(id, { after: 2, limit: 3 });
        expect(page).toMatchObject({ object: 'list', entity_id: id, has_more: true, next_after: 5 });
        expect(page.data.map((m) => m.seq)).toEqual([3, 4, 5]);
        await expect(b().listMessages(id, { limit: 501 })).rejects.toBeInstanceOf(BadRequestError);
        await expect(b().listMessages(id, { limit: 0 })).rejects.toBeInstanceOf(BadRequestError);
        const w = await b().getWindow(id);
        expect(w).toMatchObject({ object: 'entity.window', entity_id: id, budget_tokens: CONTRACT_LIMITS.windowBudget });
        expect(w.blocks[0].kind).toBe('summary');
        expect(checkWindowInvariant(w.blocks, 20)).toBeNull();
        expect(w.blocks.slice(0, -1).reduce((s, x) => s + x.tokens, 0)).toBeLessThanOrEqual(CONTRACT_LIMITS.windowBudget);
        expect((await b().listMessages(id, { limit: 500 })).data).toHaveLength(20);
      });

      it('tells a rotation as a rotation event, so the CLI says so on every backend (issue 37, item 7)', async () => {
        const id = await entity();
        const rotations: TurnEvent[] = [];
        for (let i = 0; i < 10; i++) {
          const events = await collect(b().sendMessage(id, { content: `message ${i} with a handful of words to fill the window` }));
          rotations.push(...events.filter((e) => e.type === 'rotation'));
          expect(events.at(-1)?.type).toBe('done');
        }
        expect(rotations.length).toBeGreaterThan(0);
        expect(rotations[0]).toMatchObject({ type: 'rotation', covers: [1, expect.any(Number)], summaryTokens: expect.any(Number), windowTokens: expect.any(Number) });
      });

      it('finds a fact said in turn 1 and folded out of the window 40 turns later, by word, phrase and prefix', async () => {
        const id = await entity();
        const other = await entity();
        await send(id, 'The secret word is zanzibar42, remember it for me.');
        for (let i = 0; i < 40; i++) await send(id, `turn ${i}: a few more words about the weather and the harbour`);
        await send(other, 'Nothing secret here, only the harbour.');
        const w = await b().getWindow(id);
        expect(w.blocks[0]).toMatchObject({ kind: 'summary' });
        expect(w.blocks.some((x) => x.kind === 'message' && x.covers[0] === 1)).toBe(false);
        for (const q of ['zanzibar42', '"the secret word"', 'zanzib*', 'SECRET Zanzibar42']) {
          const hits = (await b().search({ q })).data;
          expect(hits.find((h) => h.role === 'user'), q).toMatchObject({ object: 'search.hit', entity_id: id, seq: 1, role: 'user' });
          expect(hits.every((h) => h.entity_id === id), q).toBe(true);
        }
        const user = (await b().search({ q: 'zanzibar42', role: 'user' })).data;
        expect(user).toHaveLength(1);
        expect(user[0].snippet.slice(...user[0].highlights[0])).toBe('zanzibar42');
        // Every word must match; the entity filter and the time filter narrow it.
        expect((await b().search({ q: 'zanzibar42 harbour' })).data).toEqual([]);
        const narrowed = (await b().search({ q: 'harbour', entity_ids: [other] })).data;
        expect(narrowed.map((h) => h.entity_id)).toEqual(narrowed.map(() => other));
        expect(narrowed.map((h) => h.seq).sort()).toEqual([1, 2]);
        expect((await b().search({ q: 'zanzibar42', since: new Date(Date.now() + 60_000).toISOString() })).data).toEqual([]);
        const refused: string[] = [];
        for (const bad of [{ q: '' }, { q: '" * "' }, { q: 'x', limit: 0 }, { q: 'x', limit: 101 }, { q: 'x', since: 'yesterday-ish' }, { q: 'x', entity_ids: ['00000000-0000-4000-8000-000000000000'] }]) {
          refused.push(await b().search(bad).then(() => 'accepted', (err: Error) => `${err.name}: ${err.message}`));
        }
        expect(refused).toEqual([
          'BadRequestError: q is required: the words to search for',
          'BadRequestError: the query has no words to search for',
          'BadRequestError: limit must be an integer from 1 to 100, got 0',
          'BadRequestError: limit must be an integer from 1 to 100, got 101',
          'BadRequestError: since must be an ISO 8601 time, got "yesterday-ish"',
          'NotFoundError: no entity 00000000-0000-4000-8000-000000000000 on this account',
        ]);
      });

      it('search mode any: any word by its stem, ranked as recall ranks, the words it has marked; entities only', async () => {
        const id = await entity();
        const other = await entity();
        await send(id, 'My sister Margaret moved to Lisbon in 2019 to teach chemistry.');
        await send(other, 'Chemistry was never my subject.');
        // Exact: every word as written; any: a stem is enough, and one word of several.
        expect((await b().search({ q: 'teaching Margaret' })).data).toEqual([]);
        const hits = (await b().search({ q: 'teaching Margaret', mode: 'any' })).data;
        expect(hits[0]).toMatchObject({ object: 'search.hit', entity_id: id, seq: 1, role: 'user' });
        expect(hits[0].highlights.map((h) => hits[0].snippet.slice(...h))).toEqual(['Margaret']);
        const stemmed = (await b().search({ q: 'teaching', mode: 'any', entity_ids: [id], role: 'user' })).data;
        expect(stemmed.map((h) => h.seq)).toEqual([1]);
        expect(stemmed[0].highlights).toEqual([]);
        const both = (await b().search({ q: 'what about chemistry', mode: 'any', role: 'user' })).data;
        expect(both.map((h) => h.entity_id).sort()).toEqual([id, other].sort());
        expect((await b().search({ q: 'astronomy', mode: 'any' })).data).toEqual([]);
        expect((await b().search({ q: 'chemistry', mode: 'exact', entity_ids: [other], role: 'user' })).data).toHaveLength(1);
        const refused: string[] = [];
        for (const bad of [{ q: 'chemistry', mode: 'any', source: 'logs' }, { q: 'chemistry', mode: 'any', source: 'universes' }, { q: 'chemistry', mode: 'fuzzy' }, { q: 'what about it', mode: 'any' }]) {
          refused.push(await b().search(bad as never).then(() => 'accepted', (err: Error) => `${err.name}: ${err.message}`));
        }
        expect(refused).toEqual([
          'BadRequestError: mode any searches entity transcripts only, not logs',
          'BadRequestError: mode any searches entity transcripts only, not universes',
          'BadRequestError: mode must be exact or any, got "fuzzy"',
          'BadRequestError: the query has only common words, which mode any never matches alone',
        ]);
      });

      it('recall: the model searches what its window folded away, gets the message back, and the turn stores two messages', async () => {
        const id = (await b().createEntity({ model: 'mgpt-1-27b', instructions: 'Be kind.', recall: true })).id;
        expect((await b().getEntity(id)).recall).toBe('tool');
        await send(id, 'The secret word is zanzibar42, remember it for me.');
        for (let i = 0; i < 30; i++) await send(id, `turn ${i}: a few more words about the weather and the harbour`);
        expect((await b().getWindow(id)).blocks.some((x) => x.kind === 'message' && x.covers[0] <= 2)).toBe(false);
        // The model calls recall once, then answers; a rotation's summary request (if this turn has one) is answered as usual.
        const turn: any[] = [];
        fake.fallback = (body) => {
          if (isSummaryRequest(body)) return echoLastUser(body);
          turn.push(body);
          return body.messages.at(-1).role === 'tool' ? { text: 'It was zanzibar42.' } : { toolCalls: [{ id: 'r1', name: 'recall', arguments: '{"query":"secret word"}' }] };
        };
        const events = await send(id, 'What was the secret word?').finally(() => (fake.fallback = echoLastUser));
        expect(done(events).completion.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'It was zanzibar42.' }, finish_reason: 'stop' });
        expect(turn).toHaveLength(2);
        const [first, second] = turn;
        expect(first.tools.map((x: { function: { name: string } }) => x.function.name)).toEqual(['recall']);
        const tool = second.messages.at(-1);
        expect(tool).toMatchObject({ role: 'tool', tool_call_id: 'r1' });
        expect(tool.content).toMatch(/^#1 user \(.+?\): The secret word is zanzibar42, remember it for me\./);
        expect(second.messages.at(-2)).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'r1', function: { name: 'recall' } }] });
        // The transcript has the question and the answer, nothing of the round.
        const page = await b().listMessages(id, { after: 62, limit: 10 });
        expect(page.data.map((m) => [m.seq, m.role, m.content])).toEqual([[63, 'user', 'What was the secret word?'], [64, 'assistant', 'It was zanzibar42.']]);
        // The round went to the turn's log: what was searched and which messages came back.
        const log = (await b().listLogs({ pageSize: 5 })).data.find((l) => l.facade === 'recall');
        expect((await b().getLog(log!.id)).request).toMatchObject({ entityId: id, rounds: 1, recall: [{ query: 'secret word', seqs: [1, 2] }] });
        // An entity without recall is offered no tool: its prompts are as they were.
        const plain = await entity();
        await send(plain, 'hello');
        expect(fake.requests.at(-1)!.body).not.toHaveProperty('tools');
        await expect(b().updateEntity(plain, { recall: 'yes' as never })).rejects.toMatchObject({ code: 'bad_request', message: 'recall must be "auto", "tool" or "off" (or true or false), got "yes"' });
        expect((await b().updateEntity(id, { recall: false })).recall).toBeUndefined();
      });

      it('automatic recall: a fact folded away 40 turns earlier reaches the prompt of a question that shares only a stem with it, with its seq; nothing of it is stored; the log lists it', async () => {
        const id = (await b().createEntity({ model: 'mgpt-1-27b', recall: 'auto' })).id;
        expect((await b().getEntity(id)).recall).toBe('auto');
        await b().updateEntity(id, { budget_tokens: 300 });
        await send(id, 'My grandmother grew seventeen kinds of tomatoes in her greenhouse.');
        for (let i = 0; i < 40; i++) await send(id, `turn ${i}: a few more words about the weather and the harbour`);
        expect((await b().getWindow(id)).blocks.some((x) => x.kind === 'message' && x.covers[0] <= 2)).toBe(false);
        const events = await send(id, 'How many tomato varieties did grandma grow?');
        const prompt = fake.requests.at(-1)!.body.messages;
        // In the new user message, before its text: one system message only, roles alternating.
        expect(prompt.filter((m: { role: string }) => m.role === 'system').length).toBeLessThanOrEqual(1);
        expect(prompt.at(-1).role).toBe('user');
        expect(prompt.at(-1).content).toMatch(/^<recalled>\n/);
        expect(prompt.at(-1).content).toMatch(/^#1 user \(.+\): My grandmother grew seventeen kinds of tomatoes/m);
        expect(prompt.at(-1).content).toMatch(/\n<\/recalled>\n\nHow many tomato varieties did grandma grow\?$/);
        // The hit and its reply, then neighbours that fill the recall budget: all folded, none in view.
        const recalled = done(events).completion.recalled!.map((m) => m.seq);
        expect(recalled.slice(0, 2)).toEqual([1, 2]);
        const live = (await b().getWindow(id)).blocks.filter((x) => x.kind === 'message').map((x) => x.covers[0]);
        expect(recalled.every((seq) => seq < Math.min(...live))).toBe(true);
        const stored = await b().listMessages(id, { after: 82, limit: 10 });
        expect(stored.data.map((m) => m.content)).toEqual(['How many tomato varieties did grandma grow?', 'reply: How many tomato varieties did grandma grow?']);
        expect((await b().getWindow(id)).blocks.filter((x) => x.kind === 'message').map((x) => x.content).join('\n')).not.toContain('Recalled from earlier in this conversation');
        const log = (await b().listLogs({ pageSize: 5 })).data.find((l) => l.facade === 'recall');
        const logged = (await b().getLog(log!.id)).request as { entityId: string; recalled: Array<{ seq: number; role: string }> };
        expect(logged).toMatchObject({ entityId: id });
        expect(logged.recalled.slice(0, 2)).toMatchObject([{ seq: 1, role: 'user' }, { seq: 2, role: 'assistant' }]);
        expect(logged.recalled.map((m) => m.seq)).toEqual(recalled);
        // A question with nothing relevant: the same prompt as an entity without recall sends.
        const plain = (await b().createEntity({ model: 'mgpt-1-27b' })).id;
        await send(plain, 'Do you like astronomy?');
        const without = fake.requests.at(-1)!.body.messages;
        const other = (await b().createEntity({ model: 'mgpt-1-27b', recall: 'auto' })).id;
        await send(other, 'Do you like astronomy?');
        expect(fake.requests.at(-1)!.body.messages).toEqual(without);
      });

      it('replays an idempotency key; different content 400; in flight 409; a busy entity 409', async () => {
        const id = await entity();
        const first = done(await send(id, 'question', 'key-a')).completion;
        const calls = fake.requests.length;
        const again = await send(id, 'question', 'key-a');
        expect(done(again).completion).toEqual(first);
        expect(again.filter((e) => e.type === 'delta').map((e: any) => e.text).join('')).toBe(first.choices[0].message.content);
        expect(fake.requests.length).toBe(calls);
        await expect(send(id, 'other', 'key-a')).rejects.toBeInstanceOf(BadRequestError);
        fake.script({ text: 'slow reply here now', chunkDelayMs: 120 });
        const running = send(id, 'slow', 'key-b');
        await new Promise((r) => setTimeout(r, 150));
        await expect(send(id, 'slow', 'key-b')).rejects.toBeInstanceOf(ConflictError);
        await expect(send(id, 'someone else')).rejects.toMatchObject({ code: 'busy', status: 409 });
        await running;
        expect((await b().getEntity(id)).transcript.messages).toBe(4);
      });

      it('a writer on another connection (another process) holds the entity: 409; a crashed writer\'s lease expires', async () => {
        const id = await entity();
        // A second engine on the same file is exactly what another mgpt process is: its own connection.
        const other = await t.otherEngine(() => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }));
        try {
          fake.script({ text: 'from the other process', chunkDelayMs: 100 });
          const running = collect(other.entities.send(id, { content: 'elsewhere' }, 'local'));
          await new Promise((r) => setTimeout(r, 150));
          await expect(send(id, 'here')).rejects.toBeInstanceOf(ConflictError);
          await running;
          await send(id, 'here');
          const log = await b().listMessages(id, { limit: 10 });
          expect(log.data.map((m) => m.content)).toEqual(['elsewhere', 'from the other process', 'here', 'reply: here']);
          // A writer killed mid-turn leaves its lease row behind; it blocks only until it expires.
          await other.store.leases.acquire({ subject: `entity:${id}`, owner: 'killed-writer', idempotencyKey: null, contentSha256: null, expiresAt: Date.now() + 300 }, Date.now());
          await expect(send(id, 'too soon')).rejects.toBeInstanceOf(ConflictError);
          await new Promise((r) => setTimeout(r, 350));
          await send(id, 'after expiry');
          expect((await b().getEntity(id)).transcript.messages).toBe(6);
        } finally {
          other.close();
        }
      });

      it('a provider failure and a consumer that stops reading leave no trace', async () => {
        const id = await entity();
        await send(id, 'first');
        const history = async () => ({ m: await b().listMessages(id, { limit: 500 }), w: await b().getWindow(id) });
        const before = await history();
        await failing(() => expect(send(id, 'boom')).rejects.toBeInstanceOf(ProviderError));
        expect(await history()).toEqual(before);
        fake.script({ text: 'one two three four five six', chunkDelayMs: 60 });
        for await (const ev of b().sendMessage(id, { content: 'never mind' })) if (ev.type === 'delta') break;
        await new Promise((r) => setTimeout(r, 200));
        expect(await history()).toEqual(before);
        await expect(send(id, 'and now')).resolves.toBeTruthy();
      });

      it('becomes read-only at the cap (409) and refuses unpaid messages (402)', async () => {
        const id = await entity();
        const long = 'many words make a long message '.repeat(8);
        while (!(await b().getEntity(id)).read_only) await send(id, long);
        await expect(send(id, 'more')).rejects.toMatchObject({ code: 'read_only', status: 409 });
        const paid = await entity();
        await t.engine.accounts.topup('local', 0.00000001);
        const err = await send(paid, 'a message that costs more than a hundred-millionth of a dollar').catch((x) => x);
        expect(err).toBeInstanceOf(PaymentRequiredError);
        expect(err.details).toEqual({ balanceUsd: 0.00000001, billedUsd: expect.any(Number), missingUsd: expect.any(Number) });
        await t.engine.accounts.topup('local', 1000);
      });

      it('exports a tar of exactly its five files whose sha256 values match, and JSON', async () => {
        const id = await entity();
        await send(id, 'export me');
        const tar = await bytes(b().exportEntity(id, 'tar'));
        const entries = readTar(tar);
        expect(entries.map((e) => e.name)).toEqual(['manifest.json', 'transcript.json', 'window.json', 'rotations.json', 'memory.json']);
        const manifest = JSON.parse(Buffer.from(entries[0].body).toString());
        expect(manifest).toMatchObject({ format: 'mgpt-entity', version: 2, entity: { id } });
        expect(manifest.transcript.sha256).toBe(sha(entries[1].body));
        expect(manifest.window.sha256).toBe(sha(entries[2].body));
        expect(manifest.parts).toEqual({ 'rotations.json': { sha256: sha(entries[3].body) }, 'memory.json': { sha256: sha(entries[4].body) } });
        const json = JSON.parse((await bytes(b().exportEntity(id, 'json'))).toString());
        expect(json.transcript).toHaveLength(2);
        await expect(collect(b().exportEntity('nope', 'json'))).rejects.toBeInstanceOf(NotFoundError);
      });

      // Once refused remotely ("the wire contract has no import"); now POST /v1/imports?from=mgpt takes it.
      it('imports an export, on the remote backend too', async () => {
        const id = await entity();
        await send(id, 'carry me');
        const tar = await bytes(b().exportEntity(id, 'tar'));
        const copy = await b().importArchive(tar, 'tar');
        expect(copy.transcript.messages).toBe(2);
      });
    });

    describe('entities update (the PATCH extension)', () => {
      it('changes name, instructions and budget, answers the entity as getEntity does, and keeps the model', async () => {
        const id = (await b().createEntity({ model: 'mgpt-1-27b', name: 'ada', instructions: 'Be kind.' })).id;
        await send(id, 'hello');
        const renamed = await b().updateEntity(id, { name: 'Ada Lovelace' });
        expect(renamed).toEqual(await b().getEntity(id));
        expect(renamed).toMatchObject({ name: 'Ada Lovelace', instructions: 'Be kind.', model: 'mgpt-1-27b', transcript: { messages: 2 } });
        const all = await b().updateEntity(id, { name: '', instructions: 'You are Ada, terse.', budget_tokens: 180 });
        expect(all).toMatchObject({ name: '', instructions: 'You are Ada, terse.', window: { budget_tokens: 180, tokens: renamed.window.tokens, blocks: 2 } });
        expect(await b().getEntity(id)).toEqual(all);
        expect((await b().getWindow(id)).budget_tokens).toBe(180);
        expect((await b().listEntities()).data.find((e) => e.id === id)?.window).toEqual({ budget_tokens: 180 });
        // The next turn shows the model the new instructions, first.
        await send(id, 'who are you?');
        expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'You are Ada, terse.' });
        // An export carries the entity as stored; the instructions' token count was recomputed.
        const json = JSON.parse((await bytes(b().exportEntity(id, 'json'))).toString());
        expect(json.manifest.entity).toMatchObject({ name: '', instructions: 'You are Ada, terse.', model: 'mgpt-1-27b' });
        expect(json.manifest.window.budget_tokens).toBe(180);
        const tok = await loadTokenEstimator();
        expect((await t.engine.store.entities.get('local', id))!.instructionsTokens).toBe(tok.count('You are Ada, terse.'));
      });

      it('refuses a bad budget, an unknown entity, a model change, unknown fields and an empty update, in the same words', async () => {
        const id = (await b().createEntity({ model: 'mgpt-1-27b', name: 'fixed', instructions: 'Stay.' })).id;
        const before = await b().getEntity(id);
        const refusal = (input: unknown, target = id) =>
          b().updateEntity(target, input as never).then(
            () => 'accepted',
            (err) => `${err.constructor.name}: ${err.message}`,
          );
        const range = 'budget_tokens must be an integer from 16 to 1000000';
        expect([
          await refusal({ budget_tokens: 5 }),
          await refusal({ budget_tokens: 0 }),
          await refusal({ budget_tokens: -200 }),
          await refusal({ budget_tokens: 150.5 }),
          await refusal({ budget_tokens: 1_000_001 }),
          await refusal({ budget_tokens: '500' }),
          await refusal({ budget_tokens: null }),
          await refusal({ name: 'x'.repeat(201) }),
          await refusal({ name: 7 }),
          await refusal({ instructions: ['a'] }),
          await refusal({ model: 'mgpt-1-27b' }),
          await refusal({ model: 'gpt-4o', name: 'other' }),
          await refusal({ name: 'ok', colour: 'red' }),
          await refusal({}),
          await refusal([]),
          await refusal({ name: 'ghost' }, '00000000-0000-4000-8000-000000000000'),
        ]).toEqual([
          `BadRequestError: ${range}, got 5`,
          `BadRequestError: ${range}, got 0`,
          `BadRequestError: ${range}, got -200`,
          `BadRequestError: ${range}, got 150.5`,
          `BadRequestError: ${range}, got 1000001`,
          `BadRequestError: ${range}, got "500"`,
          `BadRequestError: ${range}, got null`,
          'BadRequestError: name is 201 characters; the limit is 200',
          'BadRequestError: name must be a string',
          'BadRequestError: instructions must be a string',
          'BadRequestError: model cannot change: an entity keeps its model for life; create a new entity for another model',
          'BadRequestError: model cannot change: an entity keeps its model for life; create a new entity for another model',
          'BadRequestError: unknown fields: colour; an update takes name, instructions, budget_tokens, cap_tokens, recall, recall_tokens, memory_tool',
          'BadRequestError: nothing to update: give at least one of name, instructions, budget_tokens, cap_tokens, recall, recall_tokens, memory_tool',
          'BadRequestError: the update must be a JSON object',
          'NotFoundError: no entity 00000000-0000-4000-8000-000000000000 on this account',
        ]);
        // A refused update changes nothing, not even updated_at.
        expect(await b().getEntity(id)).toEqual(before);
        // The edges of the range are fine.
        expect((await b().updateEntity(id, { budget_tokens: 16 })).window.budget_tokens).toBe(16);
        expect((await b().updateEntity(id, { budget_tokens: 1_000_000 })).window.budget_tokens).toBe(1_000_000);
      });

      it('the transcript cap: above what the transcript holds and up to the engine\'s highest, refused otherwise in the same words', async () => {
        const id = (await b().createEntity({ model: 'mgpt-1-27b', name: 'capped' })).id;
        await send(id, 'a few words to hold some tokens');
        const held = (await b().getEntity(id)).transcript.tokens;
        const refusal = (input: unknown) =>
          b().updateEntity(id, input as never).then(
            () => 'accepted',
            (err) => `${err.constructor.name}: ${err.message}`,
          );
        const cap = (await b().getEntity(id)).transcript.cap_tokens;
        expect([
          await refusal({ cap_tokens: 1_000_001 }),
          await refusal({ cap_tokens: held }),
          await refusal({ cap_tokens: 0 }),
          await refusal({ cap_tokens: '5000' }),
        ]).toEqual([
          'BadRequestError: cap_tokens 1000001 is over the highest this engine allows, 1000000 (its operator can allow more: engine.maxTranscriptCap, MGPT_MAX_TRANSCRIPT_CAP)',
          `BadRequestError: cap_tokens ${held} is not above the ${held} tokens the transcript already holds: at or below them the entity would be read-only`,
          'BadRequestError: cap_tokens must be a positive integer, got 0',
          'BadRequestError: cap_tokens must be a positive integer, got "5000"',
        ]);
        expect((await b().getEntity(id)).transcript.cap_tokens).toBe(cap);
        const lowered = await b().updateEntity(id, { cap_tokens: held + 1 });
        expect([lowered.transcript.cap_tokens, lowered.read_only]).toEqual([held + 1, false]);
      });

      it('a smaller budget takes effect by rotation on the next turn, keeping the window invariant', async () => {
        const id = await entity();
        for (let i = 0; i < 4; i++) await send(id, `message ${i} with several words in it`);
        const full = await b().getWindow(id);
        expect(full.blocks.every((x) => x.kind === 'message')).toBe(true);
        const budget = 60;
        expect(full.tokens).toBeGreaterThan(budget);
        // The update itself rotates nothing: the window waits, over budget, for the next turn.
        const updated = await b().updateEntity(id, { budget_tokens: budget });
        expect(updated.window).toEqual({ budget_tokens: budget, tokens: full.tokens, blocks: full.blocks.length });
        expect(await b().getWindow(id)).toEqual({ ...full, budget_tokens: budget });
        const calls = fake.requests.length;
        await send(id, 'hi');
        // One summary request, then the reply.
        expect(fake.requests.length).toBe(calls + 2);
        const w = await b().getWindow(id);
        expect(w.blocks[0]).toMatchObject({ kind: 'summary', role: 'system', covers: [1, expect.any(Number)] });
        expect(checkWindowInvariant(w.blocks, 10)).toBeNull();
        expect(w.tokens).toBe(w.blocks.reduce((s, x) => s + x.tokens, 0));
        expect(w.tokens).toBeLessThanOrEqual(budget);
        expect(w.blocks.at(-2)).toMatchObject({ kind: 'message', role: 'user', content: 'hi', covers: [9, 9] });
        // The transcript keeps every original.
        expect((await b().listMessages(id, { limit: 500 })).data).toHaveLength(10);
      });

      it('may change an entity while a turn holds its lease: the turn finishes on the old head, the next uses the new', async () => {
        const id = (await b().createEntity({ model: 'mgpt-1-27b', name: 'busy', instructions: 'Old instructions.' })).id;
        fake.script({ text: 'a slow reply comes now', chunkDelayMs: 80 });
        const running = send(id, 'slow one');
        await new Promise((r) => setTimeout(r, 120));
        await expect(send(id, 'meanwhile')).rejects.toMatchObject({ code: 'busy', status: 409 });
        const updated = await b().updateEntity(id, { name: 'renamed', instructions: 'New instructions.', budget_tokens: 150 });
        expect(updated).toMatchObject({ name: 'renamed', window: { budget_tokens: 150 }, transcript: { messages: 0 } });
        expect(done(await running).completion.choices[0].message.content).toBe('a slow reply comes now');
        const slow = fake.requests.find((r) => r.body.messages?.some((m: any) => m.content === 'slow one'))!;
        expect(slow.body.messages[0]).toEqual({ role: 'system', content: 'Old instructions.' });
        const after = await b().getEntity(id);
        expect(after).toMatchObject({ name: 'renamed', instructions: 'New instructions.', window: { budget_tokens: 150, blocks: 2 }, transcript: { messages: 2 } });
        await send(id, 'next');
        expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'New instructions.' });
      });
    });

    describe('universes', () => {
      const ask = (body: Record<string, unknown>) => b().respond({ model: 'game-1-lite-frozen', ...body } as never);
      const universe = async () => (await b().createUniverse({ storedPrompt: 'narrator' })).universe;

      it('search finds a universe\'s messages and the logs of its turns, by source, and only the caller\'s', async () => {
        const created = await b().createUniverse({ storedPrompt: 'narrator', displayName: 'lair' });
        await ask({ universe: created.universe, userInput: 'A dragon named Quillmoss sleeps here.' });
        await ask({ universe: created.universe, userInput: 'and the river?' });
        const other = await universe();
        await ask({ universe: other, userInput: 'nothing about the beast' });
        const hits = (await b().search({ q: 'quillmoss', source: 'universes' })).data;
        expect(hits.map((h) => [h.universe_id, h.universe_name, h.seq, h.role]).sort()).toEqual([
          [created.universe, 'lair', 1, 'user'],
          [created.universe, 'lair', 2, 'assistant'],
        ]);
        expect((await b().search({ q: 'quillmoss', source: 'universes', role: 'user' })).data).toHaveLength(1);
        expect((await b().search({ q: 'beast', source: 'universes', universe_ids: [created.universe] })).data).toEqual([]);
        const logs = (await b().search({ q: 'quillmoss', source: 'logs' })).data;
        expect(logs).toHaveLength(1);
        expect(logs[0]).toMatchObject({ object: 'search.hit', universe_id: created.universe, log_id: expect.any(String) });
        expect(logs[0].snippet).toBe('A dragon named Quillmoss sleeps here. reply: A dragon named Quillmoss sleeps here.');
        expect((await b().getLog(logs[0].log_id!)).request).toMatchObject({ userInput: 'A dragon named Quillmoss sleeps here.' });
        // Entity transcripts hold none of it.
        expect((await b().search({ q: 'quillmoss' })).data).toEqual([]);
        const refused: string[] = [];
        for (const bad of [
          { q: 'x', source: 'everything' },
          { q: 'x', source: 'logs', role: 'user' },
          { q: 'x', role: 'tool' },
          { q: 'x', source: 'universes', universe_ids: ['00000000-0000-4000-8000-0000000000aa'] },
          { q: 'x', universe_ids: [created.universe] },
        ]) refused.push(await b().search(bad as never).then(() => 'accepted', (err: Error) => `${err.name}: ${err.message}`));
        expect(refused).toEqual([
          'BadRequestError: source must be one of entities, universes, logs, got "everything"',
          'BadRequestError: role does not apply to logs: a record holds both what was asked and what was answered',
          'BadRequestError: role must be user or assistant, got "tool"',
          'NotFoundError: no universe 00000000-0000-4000-8000-0000000000aa on this account',
          'BadRequestError: universe_ids applies to source universes only',
        ]);
      });

      it('creates a universe and answers turns with the full response shape', async () => {
        const created = await b().createUniverse({ storedPrompt: 'narrator', displayName: 'c' });
        expect(created).toEqual({ universe: expect.any(String), userId: expect.any(String), prompt: { storedPrompt: 'narrator', stored: true } });
        const r = await ask({ universe: created.universe, userInput: 'hello' });
        expect(r.assistantRaw).toBe('reply: hello');
        expect(r.promptFingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: PROMPT_TEXT });
        expect(JSON.stringify(r)).not.toContain('CONTRACT-PROMPT-MARKER');
        expect(Object.keys(r.diagnostics.serverStages)).toEqual(['auth', 'load', 'truncate', 'promptBuild', 'provider']);
        await expect(b().createUniverse({ storedPrompt: 'missing' })).rejects.toBeInstanceOf(NotFoundError);
        await expect(ask({ universe: '00000000-0000-4000-8000-0000000000aa', userInput: 'x' })).rejects.toMatchObject({ code: 'not_found', message: 'Universe not found' });
      });

      it('continues tool calls with cumulative results, each stored once', async () => {
        const u = await universe();
        const tools = [{ type: 'function', name: 'roll' }, { type: 'function', name: 'look' }];
        fake.script({ toolCalls: [{ id: 'x1', name: 'roll', arguments: '{}' }, { id: 'x2', name: 'look', arguments: '{}' }] });
        const first = await ask({ universe: u, userInput: 'go', tools });
        expect(first.toolCalls?.map((c) => c.callId)).toEqual(['x1', 'x2']);
        await expect(ask({ universe: u, userInput: 'new input' })).rejects.toBeInstanceOf(BadRequestError);
        const bad = await ask({ universe: u, userInput: 'go', toolResults: [{ callId: 'zz', name: 'roll', output: {}, ok: true }] }).catch((e) => e);
        expect(bad).toBeInstanceOf(BadRequestError);
        expect(bad.errors).toEqual([{ field: 'toolResults[0].callId', message: 'zz is not pending' }]);
        const r1 = { callId: 'x1', name: 'roll', output: { v: 3 }, ok: true };
        const r2 = { callId: 'x2', name: 'look', output: { v: 'dark' }, ok: true };
        expect((await ask({ universe: u, userInput: 'go', toolResults: [r1] })).toolCalls?.map((c) => c.callId)).toEqual(['x2']);
        fake.script({ text: 'Done.' });
        expect((await ask({ universe: u, userInput: 'go', toolResults: [r1, r2] })).assistantRaw).toBe('Done.');
        const calls = fake.requests.length;
        expect((await ask({ universe: u, userInput: 'go', toolResults: [r1, r2] })).assistantRaw).toBe('Done.');
        expect(fake.requests.length).toBe(calls);
        const sent = fake.requests.at(-1)!.body.messages;
        expect(sent.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id)).toEqual(['x1', 'x2']);
      });

      it('de-duplicates by requestId after a 5xx and after success', async () => {
        const u = await universe();
        await failing(() => expect(ask({ universe: u, userInput: 'fragile', requestId: 'c-1' })).rejects.toBeInstanceOf(ProviderError));
        const ok = await ask({ universe: u, userInput: 'fragile', requestId: 'c-1' });
        const calls = fake.requests.length;
        expect(await ask({ universe: u, userInput: 'fragile', requestId: 'c-1' })).toEqual({ ...ok, diagnostics: { ...ok.diagnostics, replayed: true } });
        expect(fake.requests.length).toBe(calls);
        const next = await ask({ universe: u, userInput: 'after' });
        expect(next.diagnostics.prompt.totalMessages).toBe(3); // the failed attempt's input was stored once
      });

      it('validates: statePointer, modelOverride, universe with universeDoc, gateway fields', async () => {
        const u = await universe();
        await ask({ universe: u, userInput: 'one' });
        const fields = async (body: Record<string, unknown>) => ((await ask(body).catch((e) => e)) as BadRequestError).errors?.map((e) => e.field);
        expect(await fields({ universe: u, userInput: 'x', statePointer: 9 })).toEqual(['statePointer']);
        expect(await fields({ userInput: 'x', modelOverride: 'v/x' })).toEqual(['modelOverride']);
        expect(await fields({ universe: u, universeDoc: { conversation: [], runtime: { conversation: [] } }, userInput: 'x' })).toEqual(['universe']);
        expect(await fields({ userInput: 'x', userId: 'me' })).toEqual(['userId']);
        expect(await fields({ userInput: 'x', usageForward: {} })).toEqual(['usageForward']);
        await ask({ universe: u, userInput: 'branch', statePointer: 0 });
        expect((await ask({ universe: u, userInput: 'then' })).diagnostics.prompt.totalMessages).toBe(3);
      });

      it('a refused request changes nothing, and both backends refuse it in the same words', async () => {
        const u = await universe();
        await ask({ universe: u, userInput: 'one' });
        // The remote API has no universe document: read it from the engine behind the backend.
        const doc = () => t.engine.universes.doc(u);
        const before = await doc();
        const refusals: Array<[Record<string, unknown>, string[]]> = [
          // The stored prompt has no output contract.
          [{ universe: u, userInput: 'begin', useStructuredOutput: true }, ['useStructuredOutput']],
          // Checked after a statePointer that would truncate: the truncation must not happen either.
          [{ universe: u, userInput: 'begin', statePointer: 0, useStructuredOutput: true }, ['useStructuredOutput']],
          [{ universe: u, userInput: '', statePointer: 0, toolResults: [{ callId: 'c9', name: 't', output: {}, ok: true }] }, ['toolResults[0].callId']],
          [{ universe: u, userInput: 'x', bogus: 1, useStructuredOutput: 'yes' }, ['bogus', 'useStructuredOutput']],
        ];
        const messages: string[] = [];
        for (const [body, fields] of refusals) {
          const err = await ask(body).catch((e) => e);
          expect(err).toBeInstanceOf(BadRequestError);
          expect((err as BadRequestError).errors?.map((e) => e.field)).toEqual(fields);
          messages.push((err as BadRequestError).message);
          expect(await doc()).toEqual(before);
        }
        expect(messages).toEqual([
          'useStructuredOutput: this prompt has no stored output contract (responseFormat)',
          'useStructuredOutput: this prompt has no stored output contract (responseFormat)',
          'no turn is waiting for tool results',
          'bogus: unknown field; useStructuredOutput: must be a boolean',
        ]);
      });

      it('a second turn on a universe while one runs is refused with 409 and stores nothing', async () => {
        const u = await universe();
        const calls = fake.requests.length;
        fake.script({ text: 'slow answer', delayMs: 300 });
        const first = ask({ universe: u, userInput: 'first' });
        while (fake.requests.length === calls) await new Promise((r) => setTimeout(r, 10));
        await expect(ask({ universe: u, userInput: 'second' })).rejects.toBeInstanceOf(ConflictError);
        await first;
        expect((await t.engine.universes.doc(u)).runtime.conversation.map((m) => m.content)).toEqual(['first', 'slow answer']);
      });

      it('inline and standalone modes', async () => {
        const inline = await ask({ universeDoc: { prompt: { text: 'Inline.' }, conversation: [], runtime: { conversation: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] } }, userInput: 'c' });
        expect(fake.requests.at(-1)!.body.messages).toEqual([
          { role: 'system', content: 'Inline.' },
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: 'c' },
        ]);
        expect(inline.diagnostics.summary.mode).toBe('inline');
        await ask({ model: 'general-frozen-overridable', modelOverride: 'vendor/m', userInput: 'solo' });
        expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'vendor/m', messages: [{ role: 'user', content: 'solo' }] });
      });

      it('generates an image in the seed part order, and logs every generation', async () => {
        const img = await b().generateImage({
          sceneUid: 'sc',
          systemPrompt: 'Sys.',
          description: 'Desc',
          additionalPrompt: 'Add',
          backgroundReference: { type: 'text', text: 'bg' },
          referenceImages: [{ type: 'text', text: 'ref' }],
        });
        expect(img).toMatchObject({ sceneUid: 'sc', model: 'image-1', images: [{ mimeType: 'image/png', data: expect.any(String) }] });
        expect(fake.requests.at(-1)!.body.messages[1].content.map((p: any) => p.text)).toEqual(['bg', 'ref', 'Desc', 'Add']);
        await expect(b().generateImage({ sceneUid: 'sc', systemPrompt: 'x', description: 'y', imageConfig: { imageSize: '9K' } } as never)).rejects.toBeInstanceOf(BadRequestError);
        const logs = await b().listLogs({ kind: 'image', pageSize: 100 });
        expect(logs.data.some((l) => l.id === img.requestLog.id)).toBe(true);
        expect(logs.data.every((l) => l.kind === 'image')).toBe(true);
        const detail = await b().getLog(img.requestLog.id);
        expect(detail).toMatchObject({ id: img.requestLog.id, kind: 'image', request: expect.any(Object), response: { images: 1 } });
        const all = await b().listLogs({ pageSize: 100 });
        expect(JSON.stringify(all)).not.toContain('CONTRACT-PROMPT-MARKER');
        await expect(b().listLogs({ pageSize: 101 })).rejects.toBeInstanceOf(BadRequestError);
      });

      it('freezes a universe on its stored prompt: replacing the prompt later changes only new universes, and editing its file nothing', async () => {
        const file = join(t.promptsDir, 'narrator.md');
        const u = await universe();
        await t.engine.prompts.add('narrator', { text: 'An edited narrator.' }, { force: true });
        // The database holds the prompt (docs/design.md#stored-prompts): the file it came from no longer counts.
        writeFileSync(file, 'An edited file.\n');
        try {
          await ask({ universe: u, userInput: 'still the old one?' });
          expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: PROMPT_TEXT });
          const fresh = await universe();
          await ask({ universe: fresh, userInput: 'and now?' });
          expect(fake.requests.at(-1)!.body.messages[0]).toEqual({ role: 'system', content: 'An edited narrator.' });
        } finally {
          writeFileSync(file, PROMPT_TEXT + '\n');
          await t.engine.prompts.add('narrator', { text: PROMPT_TEXT }, { force: true });
        }
      });

      it('pages the logs newest first without overlap, filtered by kind and requestId', async () => {
        const u = await universe();
        for (let i = 0; i < 5; i++) await ask({ universe: u, userInput: `log ${i}`, requestId: `page-${i}` });
        const all = await b().listLogs({ kind: 'text', pageSize: 100 });
        const p1 = await b().listLogs({ kind: 'text', pageSize: 2, page: 1 });
        const p2 = await b().listLogs({ kind: 'text', pageSize: 2, page: 2 });
        expect(p1).toMatchObject({ page: 1, pageSize: 2, total: all.total, hasMore: true });
        expect([...p1.data, ...p2.data].map((l) => l.id)).toEqual(all.data.slice(0, 4).map((l) => l.id));
        const last = await b().listLogs({ kind: 'text', pageSize: 2, page: Math.ceil(all.total / 2) });
        expect(last.hasMore).toBe(false);
        const one = await b().listLogs({ requestId: 'page-3' });
        expect(one.total).toBe(1);
        expect((await b().getLog(one.data[0].id)).request).toMatchObject({ userInput: 'log 3' });
        await expect(b().listLogs({ page: 0 })).rejects.toBeInstanceOf(BadRequestError);
      });

      it(`denies another user's universe${name === 'local' ? ' (local: one user; checked in the engine tests)' : ''}`, async () => {
        if (t.kind === 'local') {
          await expect(() => t.engine.universes.doc('00000000-0000-4000-8000-0000000000ab')).rejects.toThrow(NotFoundError);
          return;
        }
        const u = await universe();
        await t.engine.accounts.create('intruder');
        const { RemoteBackend } = await import('../../src/backends/remote/remote-backend.js');
        const key = (await t.engine.keys.create('intruder', ['mgpt.responses:create'])).key!;
        const url = (t as any).server.url;
        const intruder = new RemoteBackend({ baseUrl: url, entitiesUrl: `${url}/v1`, apiKey: key });
        await expect(intruder.respond({ model: 'game-1-lite-frozen', universe: u, userInput: 'x' })).rejects.toBeInstanceOf(ForbiddenError);
      });
    });

    afterAll(() => {
      fake.fallback = echoLastUser;
    });
  });
}
