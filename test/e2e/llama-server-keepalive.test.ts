import { afterAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { openEngineSync } from '../../src/engine/open-engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { type LlamaServer, llamaServerParts, startLlamaServer } from '../helpers/llama-server.js';
import { tempDir } from '../helpers/temp.js';

const parts = llamaServerParts();
const dir = tempDir('mgpt-llama-keepalive-');
let llama: LlamaServer | undefined;
let engine: Engine | undefined;
let served: Listening | undefined;
afterAll(async () => {
  await served?.close();
  engine?.close();
  await llama?.stop();
});

const CLIENTS = 8;
const TURNS = 6;

if (!parts) console.warn('\n*** llama-server keep-alive test did NOT run: no llama-server or GGUF (set MGPT_TEST_LLAMA_SERVER and MGPT_TEST_GGUF) ***\n');

/**
 * llama-server closes a connection after each streamed reply without saying so in its headers,
 * and mgpt keeps provider connections alive for reuse: a buffered turn written onto such a
 * connection was reset, and its one retry could pick another closed one (a random 502). Through
 * `mgpt serve`, clients alternating streamed and buffered turns must all be answered.
 */
describe.skipIf(!parts)('mgpt serve in front of a real llama-server that closes after streamed replies', () => {
  it(`${CLIENTS} clients x ${TURNS} turns, streamed and buffered in turn (-np 4): no turn fails`, async () => {
    llama = await startLlamaServer(parts!, ['-c', '2048', '-np', '4', '-n', '16']);
    engine = openEngineSync({ db: `${dir}/keepalive.db`, route: () => ({ provider: 'openai', baseUrl: llama!.url, model: 'stories' }) });
    served = await listen(engine, '127.0.0.1', 0);
    const key = (await engine.keys.create('local', ['mgpt.responses:create'])).key!;
    const ids = await Promise.all(Array.from({ length: CLIENTS }, async () => (await engine!.entities.create({ model: 'mgpt-1-27b' }, 'local')).id));
    const failures: string[] = [];
    await Promise.all(ids.map(async (id) => {
      for (let turn = 0; turn < TURNS; turn++) {
        const res = await fetch(`${served!.url}/v1/entities/${id}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ content: `Tell me about the cat, part ${turn}.`, stream: turn % 2 === 0 }),
        });
        const text = await res.text();
        if (res.status !== 200) failures.push(`${id} turn ${turn}: ${res.status} ${text.slice(0, 200)}`);
      }
    }));
    expect(failures).toEqual([]);
    for (const id of ids) expect((await engine.entities.get(id, 'local')).transcript.messages).toBe(2 * TURNS);
  }, 240_000);
});
