import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { HALF_CHAR_TOKENS } from '../helpers/fake-openai.js';
import { servedFake } from '../helpers/served.js';

/**
 * Issue 37, item 13: an edited message in a long facade chat is answered statelessly from the
 * client's own history, which was sent whole: a 2,048-token model refused it (400). It is fitted as
 * a turn is: the newest messages that fit, the oldest dropped, and the reply says how many.
 */
const served = servedFake();
let client: OpenAI;

beforeAll(async () => {
  const key = (await served.engine.keys.create('local', ['mgpt.responses:create'])).key!;
  client = new OpenAI({ baseURL: `${served.server.url}/v1`, apiKey: key, maxRetries: 0 });
});

type Msg = { role: 'user' | 'assistant'; content: string };

function longChat(turns: number, edit: string): Msg[] {
  const chat: Msg[] = [];
  for (let i = 0; i < turns; i++) {
    chat.push({ role: 'user', content: i === 0 ? edit : `question ${i}: ${'tell me about the harbour and the boats there '.repeat(3)}` });
    chat.push({ role: 'assistant', content: `answer ${i}: ${'the boats come and go with the tide '.repeat(3)}` });
  }
  chat.push({ role: 'user', content: 'and what about the lighthouse?' });
  return chat;
}

describe('a stateless answer fits the model (issue 37)', () => {
  it('an edited long chat is answered from its newest messages that fit, says how many it dropped, and the next one fits the first time', async () => {
    served.fake.limit = { nCtx: 600, ...HALF_CHAR_TOKENS };
    try {
      await served.engine.entities.create({ model: 'mgpt-1-27b', name: 'harbour' }, 'local');
      await client.chat.completions.create({ model: 'entity:harbour', messages: [{ role: 'user', content: 'hello' }] });
      served.fake.prompts = [];
      // The history contradicts the transcript (its first message was edited): a stateless answer.
      const first = await client.chat.completions.create({ model: 'entity:harbour', messages: longChat(20, 'hello, edited') }).withResponse();
      expect(first.response.headers.get('mgpt-turn')).toBe('stateless');
      const dropped = Number(first.response.headers.get('mgpt-dropped-messages'));
      expect(dropped).toBeGreaterThan(10);
      const sent = served.fake.requests.at(-1)!.body.messages;
      expect(sent.at(-1)).toEqual({ role: 'user', content: 'and what about the lighthouse?' });
      expect(sent[0].role).toBe('user');
      expect(sent).toHaveLength(41 - dropped);
      // It learned the context from one refusal, and the answer that went through fitted.
      expect(served.fake.prompts.filter((p) => p.refused)).toHaveLength(1);
      expect(served.fake.prompts.at(-1)!.refused).toBe(false);
      served.fake.prompts = [];
      const again = await client.chat.completions.create({ model: 'entity:harbour', messages: longChat(25, 'hello, edited again') }).withResponse();
      expect(Number(again.response.headers.get('mgpt-dropped-messages'))).toBeGreaterThan(10);
      expect(served.fake.prompts.filter((p) => p.refused)).toEqual([]);
      // A short edited chat drops nothing and says nothing.
      const short = await client.chat.completions.create({ model: 'entity:harbour', messages: longChat(1, 'hi, edited') }).withResponse();
      expect(short.response.headers.get('mgpt-dropped-messages')).toBeNull();
    } finally {
      served.fake.limit = undefined;
    }
  });
});
