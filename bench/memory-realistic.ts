// bench --only=memory, the realistic part: Maya and Jonah's conversation (memory-dialogue.ts)
// imported as a ChatGPT export beside two other entities that use its words hundreds of times,
// then each question asked at the end: window only, auto recall at 1,000 and 2,000 tokens, and
// the plain BM25 floor (memory-floor.ts) at the same budgets on the same messages.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadTokenEstimator } from '../src/core/text/tokens.js';
import { retrieve } from '../src/engine/entities/retrieve.js';
import { type FakeOpenAI, startFakeOpenAI } from '../test/helpers/fake-openai.js';
import { type Dialogue, type PlacedFact, buildDialogue, noiseMessages } from './memory-dialogue.js';
import { Bm25Floor, type FloorMessage } from './memory-floor.js';
import { type Asked, type Loaded, type MemoryRun, ask, benchClock, engineOn, withRecalledTokens } from './memory.js';

export interface FloorRun {
  budget: number;
  found: number;
  questions: number;
  recalledTokens: number;
  missed: Asked[];
}

export interface RealisticBench {
  messages: number;
  sessions: number;
  questions: number;
  noiseMessages: number;
  runs: MemoryRun[];
  floors: FloorRun[];
  /** mgpt's retriever alone at each budget, over the same messages before the window as the floor (no per-turn share). */
  retriever: FloorRun[];
}

export const WINDOW_REALISTIC = 2000;
const WINDOW = WINDOW_REALISTIC;
const BUDGETS = [1000, 2000];
const NOISE_ENTITIES = 2;
const NOISE_EACH = 1500;

export async function benchRealistic(work: string): Promise<RealisticBench> {
  const dialogue = buildDialogue();
  const fake = await startFakeOpenAI();
  try {
    const loaded = await load(work, fake, dialogue);
    const questions = dialogue.facts.map(asked);
    const runs = [await ask(work, fake, questions, loaded, { windowBudget: WINDOW, mode: 'off' })];
    for (const recallTokens of BUDGETS) runs.push(await ask(work, fake, questions, loaded, { windowBudget: WINDOW, mode: 'auto', recallTokens }));
    const floors = await floorRuns(dialogue, questions, loaded, runs[0]!);
    const retriever = await retrieverRuns(questions, loaded, runs[0]!);
    return { messages: dialogue.messages.length, sessions: new Set(dialogue.messages.map((m) => m.at.toISOString().slice(0, 10))).size, questions: questions.length, noiseMessages: NOISE_ENTITIES * NOISE_EACH, runs: withRecalledTokens(runs), floors, retriever };
  } finally {
    await fake.close();
  }
}

/** The message as the import stores it: `Speaker: text`, and an image as its note after it. */
export function storedText(m: { who: string; text: string; image?: string }): string {
  return m.image ? `${m.who}: ${m.text}\n\n[image: ${m.image}]` : `${m.who}: ${m.text}`;
}

/** Found when the answer's message is in the prompt; a "when" question needs the message's date on its line too. */
function asked(f: PlacedFact): Asked {
  const line = f.lines[f.answer]!;
  const evidence = line.image ? `[image: ${line.image}]` : storedText(line);
  const date = f.at.toISOString().slice(0, 10);
  return { kind: f.kind, seq: f.seq, question: f.question, fact: evidence, found: (prompt) => holds(prompt, evidence, f.kind === 'date' ? date : undefined) };
}

function holds(prompt: any[], evidence: string, date: string | undefined): boolean {
  return prompt.some((m) => {
    const text = typeof m.content === 'string' ? m.content : '';
    const at = text.indexOf(evidence);
    if (at < 0) return false;
    if (!date) return true;
    const lineStart = text.lastIndexOf('\n#', at);
    return text.slice(Math.max(0, lineStart), at).includes(date);
  });
}

/** The export: the dialogue and the other entities' conversations, each message with its time. */
function writeExport(file: string, dialogue: Dialogue): void {
  const convs = [conversation('maya-jonah', 'Maya and Jonah', dialogue.messages.map((m) => ({ role: m.who === 'Maya' ? 'user' : 'assistant', text: `${m.who}: ${m.text}`, image: m.image, at: m.at })))];
  for (let e = 0; e < NOISE_ENTITIES; e++) {
    const t0 = Date.UTC(2023, 0, 1) + e * 86_400_000;
    convs.push(conversation(`noise-${e}`, `Other ${e}`, noiseMessages(100 + e, NOISE_EACH).map((text, i) => ({ role: i % 2 ? 'assistant' : 'user', text, at: new Date(t0 + i * 60_000) }))));
  }
  writeFileSync(file, JSON.stringify(convs));
}

type ExportMessage = { role: string; text: string; image?: string; at: Date };

/** One conversation as ChatGPT's export writes it: a chain of nodes, an image as an asset pointer with its attachment's name. */
function conversation(id: string, title: string, messages: ExportMessage[]): Record<string, unknown> {
  const mapping: Record<string, unknown> = { root: { id: 'root', message: null, parent: null, children: ['n0'] } };
  messages.forEach((m, i) => {
    const parts: unknown[] = [m.text];
    const attachments = m.image ? [{ id: `file-${i}`, name: m.image }] : [];
    if (m.image) parts.push({ content_type: 'image_asset_pointer', asset_pointer: `file-service://file-${i}` });
    const message = { id: `n${i}`, author: { role: m.role }, create_time: m.at.getTime() / 1000, content: { content_type: m.image ? 'multimodal_text' : 'text', parts }, metadata: { attachments } };
    mapping[`n${i}`] = { id: `n${i}`, message, parent: i ? `n${i - 1}` : 'root', children: i + 1 < messages.length ? [`n${i + 1}`] : [] };
  });
  const t = (m: ExportMessage | undefined) => (m ? m.at.getTime() / 1000 : 0);
  return { id, title, create_time: t(messages[0]), update_time: t(messages.at(-1)), current_node: `n${messages.length - 1}`, mapping };
}

/** Imports the export into a fresh file with a 2,000-token window; the dialogue's entity is the one asked. */
async function load(work: string, fake: FakeOpenAI, dialogue: Dialogue): Promise<Loaded> {
  const file = join(work, 'memory-realistic.json');
  writeExport(file, dialogue);
  const db = join(work, 'memory-realistic.db');
  const endsAt = dialogue.messages.at(-1)!.at.getTime() + 86_400_000;
  const engine = engineOn(db, fake, benchClock(endsAt), { windowBudget: WINDOW });
  try {
    const res = await engine.importChats(file, { from: 'chatgpt' }, 'local');
    const entityId = res.conversations.find((c) => c.source_id === 'maya-jonah')?.entity_id;
    if (!entityId) throw new Error('the bench conversation was not imported');
    return { db, entityId, endsAt };
  } finally {
    await engine.close();
  }
}

/**
 * mgpt's retriever (the one `auto` and the recall tool ask) at each budget, asked as the floor is:
 * the question alone over the messages before the window. A turn's recall is also bounded by the
 * in-view share (a tenth of the window's limit, 200 tokens at this window), which this leaves out,
 * so the retriever's own gain from a larger budget can be set beside the floor's.
 */
async function retrieverRuns(questions: Asked[], loaded: Loaded, off: MemoryRun): Promise<FloorRun[]> {
  const engine = engineOn(loaded.db, { url: 'http://127.0.0.1:9' } as FakeOpenAI, benchClock(loaded.endsAt));
  try {
    const entity = (await engine.store.entities.get('local', loaded.entityId))!;
    const window = await engine.store.entities.window(loaded.entityId);
    const beforeSeq = window.find((b) => b.kind === 'message')?.coversFrom;
    const seenByWindow = new Set(questions.filter((q) => !off.missed.includes(q)));
    const runs: FloorRun[] = [];
    for (const budget of BUDGETS) {
      const missed: Asked[] = [];
      let recalled = 0;
      for (const q of questions) {
        const r = await retrieve({ store: engine.store }, entity, q.question, { beforeSeq, budgetTokens: budget });
        recalled += r.tokens;
        if (!seenByWindow.has(q) && !q.found([{ role: 'system', content: r.text }])) missed.push(q);
      }
      runs.push({ budget, found: questions.length - missed.length, questions: questions.length, recalledTokens: recalled / questions.length, missed });
    }
    return runs;
  } finally {
    await engine.close();
  }
}

/** The floor at each budget: what the window shows, or what BM25 with neighbours brings. */
async function floorRuns(dialogue: Dialogue, questions: Asked[], loaded: Loaded, off: MemoryRun): Promise<FloorRun[]> {
  const engine = engineOn(loaded.db, { url: 'http://127.0.0.1:9' } as FakeOpenAI, benchClock(loaded.endsAt));
  const tok = await loadTokenEstimator();
  try {
    const window = await engine.store.entities.window(loaded.entityId);
    const beforeSeq = window.find((b) => b.kind === 'message')?.coversFrom ?? dialogue.messages.length + 1;
    const floor = new Bm25Floor(dialogue.messages.map((m, i): FloorMessage => ({ seq: i + 1, role: m.who === 'Maya' ? 'user' : 'assistant', content: storedText(m), createdAt: m.at.toISOString() })));
    const seenByWindow = new Set(questions.filter((q) => !off.missed.includes(q)));
    return BUDGETS.map((budget) => {
      const missed: Asked[] = [];
      let recalled = 0;
      for (const q of questions) {
        const r = floor.recall(tok, q.question, beforeSeq, budget);
        recalled += r.tokens;
        if (!seenByWindow.has(q) && !q.found([{ role: 'system', content: r.text }])) missed.push(q);
      }
      return { budget, found: questions.length - missed.length, questions: questions.length, recalledTokens: recalled / questions.length, missed };
    });
  } finally {
    await engine.close();
  }
}
