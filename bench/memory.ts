// How well an entity remembers (issue 32): a 600-turn conversation over 24 sessions with 109
// planted facts (memory-corpus.ts), then one question about each fact. A question's score is
// whether its fact's sentence reached the prompt the model was sent: the live window, automatic
// recall's message, or the recall tool's result.
import { copyFileSync, existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { contentWords } from '../src/core/text/recall-query.js';
import { loadTokenEstimator } from '../src/core/text/tokens.js';
import type { Clock } from '../src/engine/deps.js';
import type { Engine } from '../src/engine/engine.js';
import { openEngineSync } from '../src/engine/open-engine.js';
import { type FakeOpenAI, echoLastUser, isSummaryRequest, startFakeOpenAI } from '../test/helpers/fake-openai.js';
import { type Corpus, buildCorpus } from './memory-corpus.js';

export type MemoryMode = 'off' | 'tool' | 'auto';

export interface MemoryRun {
  windowBudget: number;
  mode: MemoryMode;
  /** engine.recallTokens: what auto recall may add (the tool's cap is its own: a fifth of the window, at most 1,000). */
  recallTokens?: number;
  /** Questions whose fact's sentence was in the prompt. */
  found: number;
  questions: number;
  /** The questions whose answer was not, for a closer look. */
  missed: Asked[];
  /** Mean estimated tokens recall added to a question's prompt (its prompt less the window-only one). */
  recalledTokens: number;
  /** Each question's prompt, in estimated tokens. */
  promptTokens: number[];
}

/** Each run's recalled tokens: the mean of its prompts less the window-only run's, question by question. */
export function withRecalledTokens(runs: MemoryRun[]): MemoryRun[] {
  const off = runs.find((r) => r.mode === 'off');
  return runs.map((r) => (off && r !== off ? { ...r, recalledTokens: r.promptTokens.reduce((n, t, i) => n + t - (off.promptTokens[i] ?? 0), 0) / r.promptTokens.length } : r));
}

export interface MemoryBench {
  facts: number;
  turns: number;
  sessions: number;
  runs: MemoryRun[];
  /** Plain bm25 over the question's words, its top hits within 1,000 tokens (no floor, no partners), at window 2,000. */
  floor: { found: number; questions: number };
}

const REPLIES = ['Got it.', 'That sounds like a lot.', 'Oh nice!', 'Hope it gets easier.', 'Noted.', 'Ha, fair enough.', 'Tell me more sometime.', 'Sounds lovely.'];

/**
 * Each question is asked as a new turn on a copy of the loaded conversation, and the fake model
 * fails it once its prompt is recorded (after the recall tool's round in `tool`): nothing is
 * committed, so every question sees the same 600 turns and the questions never pile up.
 */
export async function benchMemory(work: string, quick: boolean): Promise<MemoryBench> {
  const corpus = buildCorpus();
  const fake = await startFakeOpenAI();
  const runs: MemoryRun[] = [];
  let floor = { found: 0, questions: 0 };
  try {
    for (const windowBudget of [2000, 8000]) {
      const loaded = await load(work, fake, corpus, windowBudget);
      const questions = plantedQuestions(corpus);
      const off = await ask(work, fake, questions, loaded, { windowBudget, mode: 'off' });
      const these = [off, await ask(work, fake, questions, loaded, { windowBudget, mode: 'tool' })];
      for (const recallTokens of quick ? [1000] : [500, 1000, 2000]) these.push(await ask(work, fake, questions, loaded, { windowBudget, mode: 'auto', recallTokens }));
      runs.push(...withRecalledTokens(these));
      if (windowBudget === 2000) floor = await bm25Floor(work, corpus, loaded, off, 1000);
    }
  } finally {
    await fake.close();
  }
  return { facts: corpus.facts.length, turns: corpus.turns.length, sessions: new Set(corpus.turns.map((t) => t.at.toISOString().slice(0, 10))).size, runs, floor };
}

export interface Loaded {
  db: string;
  entityId: string;
  /** The clock after the last turn: questions are asked the next day. */
  endsAt: number;
}

/** A clock the bench sets: each turn is stamped on its session's date. */
export function benchClock(start: number): Clock & { set(ms: number): void } {
  let now = start;
  return { now: () => now, iso: () => new Date(now).toISOString(), set: (ms) => (now = ms) };
}

export function engineOn(db: string, fake: FakeOpenAI, clock: Clock, opts: { windowBudget?: number; recallTokens?: number } = {}): Engine {
  return openEngineSync({ db, clock, ...opts, route: () => ({ provider: 'openai', baseUrl: fake.url, model: 'fake-model', maxRetries: 0 }) });
}

/** The conversation, turn by turn through the engine (rotations and summaries as they come), with recall off. */
async function load(work: string, fake: FakeOpenAI, corpus: Corpus, windowBudget: number): Promise<Loaded> {
  const clock = benchClock(corpus.turns[0]!.at.getTime());
  const db = join(work, `memory-${windowBudget}.db`);
  const engine = engineOn(db, fake, clock, { windowBudget });
  fake.fallback = (body) => (isSummaryRequest(body) ? echoLastUser(body) : { text: REPLIES[body.messages.length % REPLIES.length]! });
  try {
    const e = await engine.entities.create({ model: 'mgpt-1-27b', recall: 'off' }, 'local');
    for (const t of corpus.turns) {
      clock.set(t.at.getTime());
      for await (const _ of engine.entities.send(e.id, { content: t.content }, 'local'));
    }
    return { db, entityId: e.id, endsAt: corpus.turns.at(-1)!.at.getTime() + 86_400_000 };
  } finally {
    await engine.close();
  }
}

/** A question the bench asks, and whether a prompt held what answers it. */
export interface Asked {
  kind: string;
  /** The answer's seq. */
  seq: number;
  question: string;
  fact?: string;
  found(prompt: any[]): boolean;
}

function plantedQuestions(corpus: Corpus): Asked[] {
  return corpus.facts.map((f) => ({ ...f, found: (prompt: any[]) => inPrompt(prompt, f.fact) }));
}

/** Every question on a fresh copy of the loaded file, in one mode; the prompt of each is kept. */
export async function ask(work: string, fake: FakeOpenAI, questions: Asked[], loaded: Loaded, run: Pick<MemoryRun, 'windowBudget' | 'mode' | 'recallTokens'>): Promise<MemoryRun> {
  const db = copyDb(loaded.db, join(work, `${basename(loaded.db, '.db')}-${run.mode}-${run.recallTokens ?? 0}.db`));
  const clock = benchClock(loaded.endsAt);
  const engine = engineOn(db, fake, clock, { recallTokens: run.recallTokens });
  const missed: Asked[] = [];
  const tok = await loadTokenEstimator();
  const tokens: number[] = [];
  let prompt: any[] = [];
  fake.fallback = (body) => {
    if (isSummaryRequest(body)) return echoLastUser(body);
    const last = body.messages.at(-1);
    // The tool mode's model asks recall with the question's own words, then answers.
    if (run.mode === 'tool' && last.role === 'user') return { toolCalls: [{ id: 'call_1', name: 'recall', arguments: JSON.stringify({ query: last.content }) }] };
    prompt = body.messages;
    return { status: 500, body: JSON.stringify({ error: { message: 'measured, not answered' } }) };
  };
  try {
    await engine.entities.update(loaded.entityId, { recall: run.mode }, 'local');
    for (const f of questions) {
      clock.set(clock.now() + 60_000);
      prompt = [];
      await drain(engine, loaded.entityId, f.question);
      if (!f.found(prompt)) missed.push(f);
      tokens.push(promptTokens(tok, prompt));
    }
  } finally {
    await engine.close();
  }
  return { ...run, found: questions.length - missed.length, questions: questions.length, missed, recalledTokens: 0, promptTokens: tokens };
}

/** Runs the question's turn; the fake fails it once its prompt is recorded. */
export async function drain(engine: Engine, entityId: string, content: string): Promise<void> {
  try {
    for await (const _ of engine.entities.send(entityId, { content }, 'local'));
  } catch {
    // Expected: the reply is refused so that nothing is committed.
  }
}

/** The estimated tokens of a request's messages: a mode's prompt less the window-only prompt is what recall added. */
export function promptTokens(tok: { count(s: string): number }, messages: any[]): number {
  return messages.reduce((n, m) => n + tok.count(typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? m.tool_calls ?? '')), 0);
}

function inPrompt(messages: any[], fact: string): boolean {
  return messages.some((m) => typeof m.content === 'string' && m.content.includes(fact));
}

/** A SQLite file closed by its engine is whole (the WAL is checkpointed on close); a leftover WAL is copied too. */
export function copyDb(from: string, to: string): string {
  copyFileSync(from, to);
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
  return to;
}

/**
 * The floor: the store's bm25 alone over each question's content words, its hits in rank order
 * until `budget` tokens (no relative floor, no partner messages, no context), added to what the
 * window showed.
 */
async function bm25Floor(work: string, corpus: Corpus, loaded: Loaded, off: MemoryRun, budget: number): Promise<{ found: number; questions: number }> {
  const db = copyDb(loaded.db, join(work, 'memory-floor.db'));
  const engine = openEngineSync({ db });
  const tok = await loadTokenEstimator();
  let found = 0;
  try {
    const blocks = await engine.store.entities.window(loaded.entityId);
    const beforeSeq = blocks.find((b) => b.kind === 'message')?.coversFrom;
    const missedByWindow = new Set(off.missed.map((m) => m.seq));
    for (const f of corpus.facts) {
      if (!missedByWindow.has(f.seq)) {
        found++;
        continue;
      }
      const hits = await engine.store.entities.searchAny({ accountId: 'local', words: contentWords(f.question), entityIds: [loaded.entityId], beforeSeq, limit: 50 });
      let used = 0;
      for (const h of hits) {
        used += tok.count(h.content) + 12;
        if (used > budget) break;
        if (h.content.includes(f.fact)) {
          found++;
          break;
        }
      }
    }
  } finally {
    await engine.close();
  }
  return { found, questions: corpus.facts.length };
}
