import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { type Listening, listen } from '../../src/server/listen.js';
import { makeEngine } from './engine.js';
import { type FakeOpenAI, startFakeOpenAI } from './fake-openai.js';
import { tempDir } from './temp.js';

/** What a file's server tests share: the scripted fake, an engine routed to it, and `mgpt serve`'s app on loopback. */
export interface ServedFake {
  fake: FakeOpenAI;
  engine: Engine;
  server: Listening;
}

/**
 * Starts them before the file's tests and closes them after; the fields are set once `beforeAll`
 * has run. With `narrator`, a stored prompt of that name exists (universe tests).
 */
export function servedFake(opts: { narrator?: boolean } = {}): ServedFake {
  const s = {} as ServedFake;
  beforeAll(async () => {
    const dir = tempDir();
    s.fake = await startFakeOpenAI();
    const promptsDir = opts.narrator ? join(dir, 'prompts') : undefined;
    if (promptsDir) {
      mkdirSync(promptsDir, { recursive: true });
      writeFileSync(join(promptsDir, 'narrator.md'), 'You narrate.\n');
    }
    s.engine = makeEngine(dir, { fake: s.fake, ...(promptsDir ? { promptsDir } : {}) });
    s.server = await listen(s.engine, '127.0.0.1', 0);
  });
  afterAll(async () => {
    await s.server?.close();
    s.engine?.close();
    await s.fake?.close();
  });
  return s;
}
