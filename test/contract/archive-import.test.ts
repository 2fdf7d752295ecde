import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/core/errors.js';
import { type FakeOpenAI, startFakeOpenAI } from '../helpers/fake-openai.js';
import { tempDir } from '../helpers/temp.js';
import { type ContractTarget, localTarget, remoteTarget } from './harness.js';

// mgpt's own archives import on both backends (remotely through POST /v1/imports?from=mgpt), checked
// by the engine alike: a round trip keeps the transcript, a damaged archive is refused the same way.

type Make = (dir: string, fake: FakeOpenAI) => Promise<ContractTarget>;
const targets: Array<[string, Make]> = [['local', localTarget], ['remote', remoteTarget]];

async function bytes(it: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return new Uint8Array(Buffer.concat(parts));
}

describe.each(targets)('archive import: %s', (name, make) => {
  const dir = tempDir(`mgpt-archive-import-${name}-`);
  let fake: FakeOpenAI;
  let t: ContractTarget;
  let source: string;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await make(dir, fake);
    source = (await t.backend.createEntity({ model: 'mgpt-1-27b', name: 'ada', recall: 'off' })).id;
    for (let i = 0; i < 3; i++) for await (const _ of t.backend.sendMessage(source, { content: `line ${i}` }));
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('a tar and a JSON export come back as new entities with the same transcript', async () => {
    for (const format of ['tar', 'json'] as const) {
      const archive = await bytes(t.backend.exportEntity(source, format));
      const copy = await t.backend.importArchive(archive, format, { name: `ada-${format}` });
      expect(copy.id).not.toBe(source);
      expect(copy.name).toBe(`ada-${format}`);
      expect(copy.transcript.messages).toBe(6);
      const said = (await t.backend.listMessages(copy.id, {})).data.map((m) => m.content);
      expect(said.filter((_, i) => i % 2 === 0)).toEqual(['line 0', 'line 1', 'line 2']);
    }
  });

  it('a damaged archive is refused with the engine\'s own error, and nothing is made', async () => {
    const before = (await t.backend.listEntities()).data.length;
    const archive = await bytes(t.backend.exportEntity(source, 'json'));
    const text = Buffer.from(archive).toString('utf8').replace('line 1', 'line X');
    const err = await t.backend.importArchive(new Uint8Array(Buffer.from(text)), 'json').then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as Error).message).toMatch(/sha256/);
    expect((await t.backend.listEntities()).data.length).toBe(before);
  });
});
