import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, CancelledError, ConflictError, NotFoundError } from '../../src/core/errors.js';
import type { RotationRecord } from '../../src/core/wire/rotation-types.js';
import { type FakeOpenAI, echoLastUser, isSummaryRequest, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';
import type { ContractTarget } from './harness.js';

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** The rotations a window's history stands on: those not undone that folded something new, in order. */
const folds = (rs: RotationRecord[]) => rs.filter((r) => !r.undone && r.trigger !== 'resummarize');

/**
 * Issue 33's rotation half through the Backend interface: 30 turns that rotate at least five
 * times, the window each reply was generated from given back byte for byte, and steering (undo,
 * resummarize, fold now). The same cases run on the local backend, the remote one against
 * mgpt serve, and two serve replicas on PostgreSQL.
 */
export function rotationSuite(name: string, make: (dir: string, fake: FakeOpenAI) => Promise<ContractTarget>): void {
  describe(`rotation history: ${name}`, () => {
    const dir = tempDir(`mgpt-rotations-${name}-`);
    let fake: FakeOpenAI;
    let t: ContractTarget;
    let id: string;
    /** The prompt of each turn's reply request, as the fake received it. */
    const sent: unknown[] = [];
    /** The span each turn's rotation notice named (the stream's `rotation` event). */
    const notices: Array<[number, number]> = [];
    beforeAll(async () => {
      fake = await startFakeOpenAI();
      t = await make(dir, fake);
      id = (await t.backend.createEntity({ model: 'mgpt-1-27b', instructions: 'You keep the ledger. LEDGER-MARKER.' })).id;
      for (let i = 1; i <= 30; i++) {
        const start = fake.requests.length;
        const events = await collect(t.backend.sendMessage(id, { content: `turn ${i}: the ledger notes entry ${i} ${'of the cargo hold '.repeat(3)}` }));
        for (const ev of events) if (ev.type === 'rotation') notices.push([...ev.covers]);
        const replies = fake.requests.slice(start).filter((r) => r.path.endsWith('/chat/completions') && !isSummaryRequest(r.body));
        sent.push(replies.at(-1)!.body.messages);
      }
    }, 120_000);
    afterAll(async () => {
      await t.close();
      await fake.close();
    });

    it('lists every rotation, and their spans tile the folded seqs', async () => {
      const { rotations } = await t.backend.listRotations(id);
      expect(rotations.length).toBeGreaterThanOrEqual(5);
      expect(rotations.every((r) => r.trigger === 'turn' && !r.undone && typeof r.seq === 'number')).toBe(true);
      let next = 1;
      for (const r of rotations) {
        expect(r.from_seq).toBe(next);
        expect(r.to_seq).toBeGreaterThanOrEqual(r.from_seq);
        expect(r.summary.text).toMatch(/^summary: /);
        expect(r.route).toEqual({ provider: 'openai', model: 'fake-model' });
        expect(r.blocks_after[0]).toMatchObject({ kind: 'summary', content: r.summary.text, covers: [1, r.to_seq] });
        next = r.to_seq + 1;
      }
      const window = await t.backend.getWindow(id);
      const firstMessage = window.blocks.find((b) => b.kind === 'message')!;
      expect(firstMessage.covers[0]).toBe(next);
      // The last record's window after is today's window, up to the turns since.
      const last = rotations.at(-1)!;
      expect(window.blocks.slice(0, last.blocks_after.length)).toEqual(last.blocks_after);
    });

    it("names in each rotation notice the span its record lists (from_seq-to_seq), not the summary's whole reach", async () => {
      const { rotations } = await t.backend.listRotations(id);
      expect(notices).toEqual(rotations.map((r) => [r.from_seq, r.to_seq]));
      expect(notices.slice(1).every(([from]) => from > 1)).toBe(true);
    });

    it('gives back, for each of the 30 replies, the prompt the model was sent, byte for byte', async () => {
      for (let i = 1; i <= 30; i++) {
        const at = await t.backend.getWindowAt(id, String(2 * i - 1));
        expect(at.seq).toBe(2 * i - 1);
        expect(JSON.stringify(at.prompt)).toBe(JSON.stringify(sent[i - 1]));
      }
      // A reply's seq means its turn; a date means the last turn stored by then.
      expect((await t.backend.getWindowAt(id, '12')).prompt).toEqual(sent[5]);
      expect((await t.backend.getWindowAt(id, new Date(Date.now() + 60_000).toISOString())).seq).toBe(59);
      await expect(t.backend.getWindowAt(id, '61')).rejects.toBeInstanceOf(BadRequestError);
      await expect(t.backend.getWindowAt(id, 'yesterday-ish')).rejects.toBeInstanceOf(BadRequestError);
      // A time without a zone would be read in each process's own zone: refused on every backend; with an offset, it is that instant.
      await expect(t.backend.getWindowAt(id, '2999-01-01T10:00:00')).rejects.toBeInstanceOf(BadRequestError);
      expect((await t.backend.getWindowAt(id, '2999-01-01T10:00:00+05:00')).seq).toBe(59);
      // Without `at`, the seed's window as it was.
      expect(Object.keys(await t.backend.getWindow(id)).sort()).toEqual(['blocks', 'budget_tokens', 'entity_id', 'object', 'tokens']);
    });

    it('undo brings back the blocks from before the last rotation, and keeps the record, marked undone', async () => {
      const before = await t.backend.getWindow(id);
      const last = (await t.backend.listRotations(id)).rotations.at(-1)!;
      const result = await t.backend.rotate(id, { action: 'undo' });
      expect(result.rotation).toMatchObject({ id: last.id, undone: true });
      const after = await t.backend.getWindow(id);
      expect(after.blocks).toEqual([...last.blocks_before, ...before.blocks.slice(last.blocks_after.length)]);
      expect(after.tokens).toBe(after.blocks.reduce((n, b) => n + b.tokens, 0));
      const { rotations } = await t.backend.listRotations(id);
      expect(rotations.at(-1)).toMatchObject({ id: last.id, undone: true });
    });

    it('resummarize changes only the summary text and its record', async () => {
      const before = await t.backend.getWindow(id);
      const history = (await t.backend.listRotations(id)).rotations;
      fake.script({ text: 'A BETTER SUMMARY of the ledger.' });
      const result = await t.backend.rotate(id, { action: 'resummarize', model: 'fake-better' });
      expect(result.rotation).toMatchObject({ trigger: 'resummarize', seq: null, summary: { text: 'A BETTER SUMMARY of the ledger.' }, route: { model: 'fake-better' }, undone: false });
      const source = folds(history).at(-1)!;
      expect([result.rotation.from_seq, result.rotation.to_seq]).toEqual([source.from_seq, source.to_seq]);
      const after = await t.backend.getWindow(id);
      expect(after.blocks.slice(1)).toEqual(before.blocks.slice(1));
      expect({ ...after.blocks[0], content: '', tokens: 0 }).toEqual({ ...before.blocks[0], content: '', tokens: 0 });
      expect(after.blocks[0].content).toBe('A BETTER SUMMARY of the ledger.');
      const now = (await t.backend.listRotations(id)).rotations;
      expect(now.slice(0, history.length)).toEqual(history);
      expect(now).toHaveLength(history.length + 1);
      // The next turn is sent the new summary (in its prompt, or folded by its own rotation), and window --at is that prompt.
      const start = fake.requests.length;
      await collect(t.backend.sendMessage(id, { content: 'and after the new summary?' }));
      const requests = fake.requests.slice(start).map((r) => r.body.messages);
      // (Joined into the one system message, after the instructions.)
      expect(requests.some((ms) => ms.some((m: { role: string; content: string }) => m.role === 'system' && m.content.endsWith('A BETTER SUMMARY of the ledger.')))).toBe(true);
      const seq = (await t.backend.getEntity(id)).transcript.messages - 1;
      expect(JSON.stringify((await t.backend.getWindowAt(id, String(seq))).prompt)).toBe(JSON.stringify(requests.at(-1)));
    });

    it('rotate folds now, down to the rotation target, as a manual record', async () => {
      const before = await t.backend.getWindow(id);
      const result = await t.backend.rotate(id, { action: 'rotate' });
      expect(result.rotation).toMatchObject({ trigger: 'manual', seq: null, undone: false });
      const after = await t.backend.getWindow(id);
      expect(after.blocks).toEqual(result.window.blocks);
      expect(after.blocks[0]).toMatchObject({ kind: 'summary', content: result.rotation.summary.text });
      expect(after.blocks.length).toBeLessThan(before.blocks.length);
      expect(result.rotation.blocks_before).toEqual(before.blocks);
      const { rotations } = await t.backend.listRotations(id);
      expect(rotations.at(-1)).toEqual(result.rotation);
    });

    it('a rotate cancelled during its summary (Ctrl-C, or the client gone) stores nothing', async () => {
      for (let i = 0; i < 3; i++) await collect(t.backend.sendMessage(id, { content: `entry ${i} to fold ${'of the cargo hold '.repeat(3)}` }));
      const before = { rotations: await t.backend.listRotations(id), window: await t.backend.getWindow(id) };
      let asked!: () => void;
      const summaryAsked = new Promise<void>((r) => (asked = r));
      const fallback = fake.fallback;
      fake.fallback = (body) => {
        if (!isSummaryRequest(body)) return fallback(body);
        asked();
        return { text: 'summary: one that arrives too late', delayMs: 800 };
      };
      try {
        const abort = new AbortController();
        const steer = t.backend.rotate(id, { action: 'rotate' }, { signal: abort.signal });
        await Promise.race([summaryAsked, steer]);
        abort.abort();
        await expect(steer).rejects.toBeInstanceOf(CancelledError);
        await new Promise((r) => setTimeout(r, 1000));
        expect(await t.backend.listRotations(id)).toEqual(before.rotations);
        expect(await t.backend.getWindow(id)).toEqual(before.window);
      } finally {
        fake.fallback = fallback;
      }
    });

    it('refuses bad steering input, and a steering action while a turn holds the entity (409)', async () => {
      await expect(t.backend.rotate(id, { action: 'sideways' } as never)).rejects.toBeInstanceOf(BadRequestError);
      await expect(t.backend.rotate(id, { action: 'rotate', model: 'x' })).rejects.toBeInstanceOf(BadRequestError);
      await expect(t.backend.listRotations('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NotFoundError);
      const before = await t.backend.getWindow(id);
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      fake.script({ text: ['held ', 'reply'], holdAfterFirst: held });
      const turn = t.backend.sendMessage(id, { content: 'hold the entity' })[Symbol.asyncIterator]();
      await turn.next();
      await expect(t.backend.rotate(id, { action: 'undo' })).rejects.toBeInstanceOf(ConflictError);
      release();
      while (!(await turn.next()).done);
      const after = await t.backend.getWindow(id);
      expect(after.blocks.slice(0, before.blocks.length)).toEqual(before.blocks);
      fake.fallback = echoLastUser;
    });
  });
}
