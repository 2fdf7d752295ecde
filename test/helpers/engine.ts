import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { TurnEvent } from '../../src/core/wire/entity-types.js';
import type { Engine } from '../../src/engine/engine.js';
import { type OpenEngineOptions, openEngineSync } from '../../src/engine/open-engine.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { type FakeOpenAI, startFakeOpenAI } from './fake-openai.js';

let n = 0;

/** An engine on a new SQLite file in `dir`, routed to the fake provider (or echo). */
export function makeEngine(
  dir: string,
  opts: Partial<OpenEngineOptions> & { fake?: FakeOpenAI } = {},
): Engine {
  const { fake, ...rest } = opts;
  return openEngineSync({
    db: join(dir, `engine-${process.pid}-${n++}.db`),
    route: () => (fake ? { provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0 } : { provider: 'echo' }),
    ...rest,
  });
}

/**
 * For a test file: an engine on a new scripted fake provider, started before its tests and closed
 * after them; `set` is given both, so the file keeps its own `engine` and `fake` variables.
 */
export function engineOnFake(dir: string, set: (started: { engine: Engine; fake: FakeOpenAI }) => void): void {
  let started: { engine: Engine; fake: FakeOpenAI } | undefined;
  beforeAll(async () => {
    const fake = await startFakeOpenAI();
    started = { engine: makeEngine(dir, { fake }), fake };
    set(started);
  });
  afterAll(async () => {
    await started?.engine.close();
    await started?.fake.close();
  });
}

/** The `done` event of a turn's events. */
export function done(events: TurnEvent[]): Extract<TurnEvent, { type: 'done' }> {
  return events.find((e) => e.type === 'done') as Extract<TurnEvent, { type: 'done' }>;
}

/** A streamed body (an export), whole. */
export async function bytes(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return Buffer.concat(parts);
}

/** Drains a turn and returns its events. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** The engine's SQLite store: tests that read the file directly (every engine here is on SQLite). */
export function sqliteOf(engine: Engine): SqliteStore {
  if (!(engine.store instanceof SqliteStore)) throw new Error('this test needs an engine on SQLite');
  return engine.store;
}
