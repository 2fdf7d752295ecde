import { BadRequestError } from '../../core/errors.js';
import { MEMORY_LABEL, type MemoryLimits } from '../../core/wire/memory.js';
import type { TokenEstimator } from '../../core/text/tokens.js';
import type { MemoryHistoryRow, MemoryRow } from '../../store/types.js';

/**
 * The pinned memory part of an entity archive (version 2): `memory.json` in the tar, the
 * `memory` member of the JSON export, `{"blocks": [...], "history": [...]}`, each item's keys in a
 * fixed order so an export is the same bytes every time. The manifest's `parts` names it with its
 * sha256, as it does the window history.
 */
export const MEMORY_FILE = 'memory.json';

interface ArchivedMemory {
  blocks: Array<{ label: string; text: string; tokens: number; updated_at: string }>;
  history: Array<{ label: string; before: string | null; after: string | null; source: 'user' | 'model'; created_at: string }>;
}

/** The bytes of `memory.json`, from the stored rows. */
export function memoryDocument(memory: { blocks: readonly MemoryRow[]; history: readonly MemoryHistoryRow[] }): string {
  const doc: ArchivedMemory = {
    blocks: memory.blocks.map((b) => ({ label: b.label, text: b.text, tokens: b.tokens, updated_at: b.updatedAt })),
    history: memory.history.map((h) => ({ label: h.label, before: h.before, after: h.after, source: h.source, created_at: h.createdAt })),
  };
  return JSON.stringify(doc);
}

/**
 * The archive's memory, checked as a set is (labels, text, this engine's limits), with the tokens
 * recounted by this engine's estimator (never taken from the archive). Over the limits is refused
 * with a hint to raise them; the import then writes nothing.
 */
export function memoryOf(raw: unknown, limits: MemoryLimits, tok: TokenEstimator): { blocks: MemoryRow[]; history: MemoryHistoryRow[] } {
  if (!isObject(raw) || !Array.isArray(raw.blocks) || !Array.isArray(raw.history)) fail('it must be an object with blocks and history');
  const doc = raw as unknown as ArchivedMemory;
  const labels = new Set<string>();
  for (const b of doc.blocks as unknown[]) {
    if (!isObject(b) || typeof b.label !== 'string' || !MEMORY_LABEL.test(b.label)) fail(`block label ${JSON.stringify(isObject(b) ? b.label : b)} is not a valid label`);
    if (labels.has(b.label)) fail(`it holds block ${b.label} twice`);
    labels.add(b.label);
    if (typeof b.text !== 'string' || !b.text.trim() || !isCount(b.tokens) || typeof b.updated_at !== 'string') fail(`block ${b.label} is incomplete`);
  }
  for (const h of doc.history as unknown[]) {
    const text = (t: unknown) => t === null || typeof t === 'string';
    const ok = isObject(h) && typeof h.label === 'string' && text(h.before) && text(h.after) && (h.source === 'user' || h.source === 'model') && typeof h.created_at === 'string';
    if (!ok) fail('a history entry is incomplete');
  }
  const blocks = doc.blocks.map((b) => ({ label: b.label, text: b.text, tokens: tok.count(b.text), updatedAt: b.updated_at }));
  const total = blocks.reduce((n, b) => n + b.tokens, 0);
  if (blocks.length > limits.blocks || total > limits.tokens) {
    throw new BadRequestError(
      `import: the archive's pinned memory (${blocks.length} blocks, ${total} tokens) is over this engine's limits (${limits.blocks} blocks, ${limits.tokens} tokens)`,
      { hint: 'raise the limits first: mgpt config set engine.memoryTokens N (engine.memoryBlocks N)' },
    );
  }
  const history = doc.history.map((h) => ({ label: h.label, before: h.before, after: h.after, source: h.source, createdAt: h.created_at }));
  return { blocks, history };
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isCount(x: unknown): x is number {
  return Number.isSafeInteger(x) && (x as number) >= 0;
}

function fail(message: string): never {
  throw new BadRequestError(`import: ${MEMORY_FILE}: ${message}`);
}
