import { describe, expect, it } from 'vitest';
import { BadRequestError, NotFoundError } from '../../src/core/errors.js';
import type { TurnEvent } from '../../src/core/wire/entity-types.js';
import { echoLastUser, isSummaryRequest } from '../helpers/fake-openai.js';
import { collect, contractTargets, useContractTarget } from './targets.js';

// Pinned memory (issue 33) through the Backend interface, on all three configurations: the local
// backend, the remote one against mgpt serve, and two serve replicas on one PostgreSQL database.

const targets = await contractTargets('the pinned memory contract');

describe.each(targets)('pinned memory contract: %s', (name, make) => {
  const ctx = useContractTarget('mgpt-memory', name, make);
  const b = () => ctx.t.backend;
  const entity = async () => (await b().createEntity({ model: 'mgpt-1-27b', instructions: 'You are Ada.', recall: 'off' })).id;
  const chat = (from: number) => ctx.fake.requests.slice(from).filter((r) => !isSummaryRequest(r.body)).map((r) => r.body.messages);

  it('sets, lists, gets, replaces and removes blocks, with every change in the history', async () => {
    const id = await entity();
    const set = await b().setMemory(id, 'user', 'Ada, a DBA');
    expect(set).toMatchObject({ label: 'user', text: 'Ada, a DBA', tokens: expect.any(Number) });
    await b().setMemory(id, 'deploy', 'PostgreSQL 15');
    await b().setMemory(id, 'user', 'Ada, an engineer');
    const list = await b().listMemory(id);
    expect(list.memory.map((m) => [m.label, m.text])).toEqual([['deploy', 'PostgreSQL 15'], ['user', 'Ada, an engineer']]);
    expect(list.tokens).toBe(list.memory.reduce((n, m) => n + m.tokens, 0));
    expect(list.limits).toEqual({ blocks: 16, tokens: 2000 });
    expect(await b().getMemory(id, 'deploy')).toEqual(list.memory[0]);
    await b().deleteMemory(id, 'deploy');
    await expect(b().getMemory(id, 'deploy')).rejects.toBeInstanceOf(NotFoundError);
    await expect(b().deleteMemory(id, 'deploy')).rejects.toBeInstanceOf(NotFoundError);
    const { history } = await b().memoryHistory(id);
    expect(history.map((h) => [h.label, h.before, h.after, h.source])).toEqual([
      ['user', null, 'Ada, a DBA', 'user'],
      ['deploy', null, 'PostgreSQL 15', 'user'],
      ['user', 'Ada, a DBA', 'Ada, an engineer', 'user'],
      ['deploy', 'PostgreSQL 15', null, 'user'],
    ]);
  });

  it('the limits and bad labels refuse with 400 and change nothing', async () => {
    const id = await entity();
    for (let i = 0; i < 16; i++) await b().setMemory(id, `b${i}`, `block ${i}`);
    const before = [await b().listMemory(id), await b().memoryHistory(id)];
    await expect(b().setMemory(id, 'b16', 'one too many')).rejects.toBeInstanceOf(BadRequestError);
    await expect(b().setMemory(id, 'b0', 'word '.repeat(2100))).rejects.toThrow(/the limit is 2000; nothing was changed/);
    await expect(b().setMemory(id, 'no/slash', 'x')).rejects.toBeInstanceOf(BadRequestError);
    await expect(b().setMemory(id, 'b0', '')).rejects.toBeInstanceOf(BadRequestError);
    expect([await b().listMemory(id), await b().memoryHistory(id)]).toEqual(before);
    await expect(b().listMemory('00000000-0000-4000-8000-00000000dead')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('a block pinned at turn 1 is in every prompt of 30 turns with rotations; an edit applies from the next turn on', async () => {
    const id = await entity();
    await b().setMemory(id, 'user', 'Ada lives in Porto');
    const from = ctx.fake.requests.length;
    let rotations = 0;
    for (let i = 0; i < 30; i++) {
      if (i === 20) await b().setMemory(id, 'user', 'Ada lives in Braga');
      const events: TurnEvent[] = await collect(b().sendMessage(id, { content: `a message of some length about the river, number ${i}` }));
      rotations += events.filter((e) => e.type === 'rotation').length;
    }
    expect(rotations).toBeGreaterThanOrEqual(3);
    const prompts = chat(from);
    expect(prompts).toHaveLength(30);
    prompts.forEach((p, i) => {
      // One system message: the instructions, then the memory (then any summary).
      expect(p.filter((m: { role: string }) => m.role === 'system')).toHaveLength(1);
      expect(p[0].content.startsWith(`You are Ada.\n\nPinned memory:\nuser: Ada lives in ${i < 20 ? 'Porto' : 'Braga'}`)).toBe(true);
    });
    // GET /window stays the seed's window: no memory in it.
    expect((await b().getWindow(id)).blocks.some((x) => x.content.includes('Pinned memory'))).toBe(false);
  });

  it("with memory_tool the model's remember call sets the block and the turn stores two messages", async () => {
    const id = await entity();
    ctx.fake.fallback = (body) => {
      if (isSummaryRequest(body) || !body.tools) return echoLastUser(body);
      if (body.messages.at(-1).role === 'tool') return { text: 'Noted.' };
      return { toolCalls: [{ id: 'c1', name: 'remember', arguments: JSON.stringify({ label: 'city', text: 'Porto' }) }] };
    };
    try {
      await collect(b().sendMessage(id, { content: 'I moved to Porto', memoryTool: true }));
    } finally {
      ctx.fake.fallback = echoLastUser;
    }
    expect((await b().listMessages(id)).data.map((m) => m.content)).toEqual(['I moved to Porto', 'Noted.']);
    expect((await b().getMemory(id, 'city')).text).toBe('Porto');
    expect((await b().memoryHistory(id)).history).toMatchObject([{ label: 'city', before: null, after: 'Porto', source: 'model' }]);
  });
});
