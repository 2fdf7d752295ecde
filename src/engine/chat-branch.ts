import type { Entity, ExportManifest, TranscriptMessage, WindowBlock } from '../core/entity-types.js';
import { loadTokenEstimator } from '../core/tokens.js';
import type { ClientMessage } from './chat-facade.js';
import type { EngineDeps } from './deps.js';
import { sha256 } from '../core/hash.js';
import type { EntityService } from './entities.js';
import { windowDocument } from './entity-wire.js';

/**
 * A branch (the facade's opt-in answer to a contradicting history): a new entity with the same
 * head (instructions, budget, cap) whose transcript is the client's history, sharing the
 * original's messages before the first difference. Its window keeps the original's summaries that
 * lie wholly before that point and holds every later message as a message block; the next turn
 * rotates it down to the budget. Written through the import path (one verified transaction), so a
 * branch is exactly an import of an edited export. The copied history is not billed.
 */
export async function branchEntity(
  deps: EngineDeps,
  entities: EntityService,
  original: Entity,
  history: ClientMessage[],
  sharedMessages: number,
  accountId: string,
  /** The branch's id, when the request names it (see branchIdFor); else a new one. */
  id?: string,
): Promise<Entity> {
  const tok = await loadTokenEstimator();
  const now = deps.clock.iso();
  const transcript: TranscriptMessage[] = history.map((m, i) => ({
    seq: i + 1,
    role: m.role as 'user' | 'assistant',
    content: m.content,
    tokens: tok.count(m.content),
    created_at: now,
  }));
  const blocks: WindowBlock[] = [];
  let next = 1;
  for (const b of (await entities.window(original.id, accountId)).blocks) {
    if (b.kind !== 'summary' || b.covers[0] !== next || b.covers[1] > sharedMessages) break;
    blocks.push({ ...b, id: deps.newId(), tokens: tok.count(b.content) });
    next = b.covers[1] + 1;
  }
  for (const m of transcript.slice(next - 1)) {
    blocks.push({ id: deps.newId(), kind: 'message', role: m.role, content: m.content, tokens: m.tokens, covers: [m.seq, m.seq] });
  }
  const transcriptTokens = transcript.reduce((n, m) => n + m.tokens, 0);
  const windowTokens = blocks.reduce((n, b) => n + b.tokens, 0);
  const budget = original.window.budget_tokens;
  const transcriptText = `[${transcript.map((m) => JSON.stringify(m)).join(',')}]`;
  const manifest: ExportManifest = {
    format: 'mgpt-entity',
    version: 1,
    entity: {
      id: id ?? original.id,
      name: branchName(original.name),
      instructions: original.instructions,
      model: original.model,
      state: original.state,
      created_at: now,
      updated_at: now,
    },
    transcript: { messages: transcript.length, tokens: transcriptTokens, cap_tokens: original.transcript.cap_tokens, sha256: sha256(transcriptText) },
    window: { budget_tokens: budget, tokens: windowTokens, blocks: blocks.length, sha256: sha256(windowDocument(budget, windowTokens, blocks)) },
    exported_at: now,
    exporter: `mgpt/${deps.version}`,
  };
  const doc = JSON.stringify({ manifest, transcript, window: { budget_tokens: budget, tokens: windowTokens, blocks } });
  return entities.import(new TextEncoder().encode(doc), 'json', { keepId: id !== undefined }, accountId);
}

/**
 * The branch a request with an Idempotency-Key makes: the same original and key always name the
 * same branch (a UUID-shaped digest), so a retry finds the branch, and its reply, instead of
 * forking again.
 */
export function branchIdFor(originalId: string, key: string): string {
  const h = sha256(`mgpt-branch\u0000${originalId}\u0000${key}`);
  const variant = (8 | (parseInt(h[16], 16) & 3)).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function branchName(name: string): string {
  const base = name || 'entity';
  return `${base.slice(0, 190)} (branch)`;
}
