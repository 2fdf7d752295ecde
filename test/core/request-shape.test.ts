import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/core/chat.js';
import { CONTINUED, hasShape, shapeMessages } from '../../src/core/request-shape.js';
import { alternates } from '../helpers/roles.js';

/** A small deterministic generator, so a failing case can be rerun. */
function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

function randomMessages(next: () => number): ChatMessage[] {
  const roles = ['system', 'user', 'assistant', 'user', 'assistant'] as const;
  return Array.from({ length: Math.floor(next() * 12) }, (_, i): ChatMessage => {
    const role = roles[Math.floor(next() * roles.length)];
    return role === 'system' ? { role, content: `s${i}` } : role === 'user' ? { role, content: `u${i}` } : { role, content: `a${i}` };
  });
}

describe('the one request shape', () => {
  it('holds for any list of messages, and keeps every text in order (property, 2,000 lists)', () => {
    const next = rng(42);
    for (let n = 0; n < 2000; n++) {
      const input = randomMessages(next);
      const out = shapeMessages(input);
      expect(hasShape(out), JSON.stringify(input)).toBe(true);
      expect(alternates(out), JSON.stringify(input)).toBe(true);
      const texts = (ms: ChatMessage[], system: boolean) => ms.filter((m) => (m.role === 'system') === system).map((m) => String(m.content)).join('\n\n');
      expect(texts(out, true)).toBe(texts(input, true));
      expect(texts(out, false).replace(`${CONTINUED}\n\n`, '').replace(CONTINUED, '')).toBe(texts(input, false));
    }
  });

  it('joins system messages into the first, merges neighbours of one role, and puts a user line before a leading reply', () => {
    expect(shapeMessages([
      { role: 'system', content: 'instructions' }, { role: 'system', content: 'memory' }, { role: 'system', content: 'summary' },
      { role: 'assistant', content: 'a reply whose question was folded' }, { role: 'user', content: 'one' }, { role: 'user', content: 'two' },
    ])).toEqual([
      { role: 'system', content: 'instructions\n\nmemory\n\nsummary' },
      { role: 'user', content: CONTINUED }, { role: 'assistant', content: 'a reply whose question was folded' }, { role: 'user', content: 'one\n\ntwo' },
    ]);
  });

  it("leaves a tool round in the provider's protocol and an already shaped list as the same array", () => {
    const round: ChatMessage[] = [
      { role: 'system', content: 'x' }, { role: 'user', content: 'q' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'r' }, { role: 'assistant', content: 'a' }, { role: 'user', content: 'q2' },
    ];
    expect(shapeMessages(round)).toBe(round);
    expect(alternates(round)).toBe(true);
  });
});
