import { BadRequestError, ConflictError, NotFoundError } from '../../core/errors.js';
import { KNOWN_MODELS } from '../../core/models.js';

/**
 * The rules of the OpenAI-compatible facade (SPEC section 8), without HTTP: which target a
 * `model` names, what a client's messages must look like, and how a resent history is reconciled
 * with an entity's transcript.
 */

export const ENTITY_PREFIX = 'entity:';
export const UNIVERSE_PREFIX = 'universe:';

export type FacadeTarget =
  | { kind: 'entity'; ref: string }
  | { kind: 'universe'; ref: string }
  | { kind: 'platform'; id: string };

export interface ClientMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** The models a stateless completion can use: platform ids and text aliases (not the image alias). */
export const COMPLETION_MODELS = KNOWN_MODELS.filter((m) => m.kind !== 'image');

export function parseFacadeModel(model: unknown): FacadeTarget {
  if (typeof model !== 'string' || model === '') throw new BadRequestError('model is required (a string)');
  if (model.startsWith(ENTITY_PREFIX)) return { kind: 'entity', ref: nonEmpty(model.slice(ENTITY_PREFIX.length), model) };
  if (model.startsWith(UNIVERSE_PREFIX)) return { kind: 'universe', ref: nonEmpty(model.slice(UNIVERSE_PREFIX.length), model) };
  if (COMPLETION_MODELS.some((m) => m.id === model)) return { kind: 'platform', id: model };
  throw unknownModel(model);
}

export function unknownModel(model: string): NotFoundError {
  return new NotFoundError(`The model \`${model}\` does not exist`, { hint: 'list models with GET /v1/models' });
}

function nonEmpty(ref: string, model: string): string {
  if (ref === '') throw unknownModel(model);
  return ref;
}

/** `messages` as OpenAI clients send it: roles system|developer|user|assistant, text content (a string or text parts). */
export function checkMessages(raw: unknown): ClientMessage[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new BadRequestError('messages must be a non-empty array');
  return raw.map((m, i) => {
    if (typeof m !== 'object' || m === null) throw new BadRequestError(`messages[${i}] must be an object`);
    const { role, content } = m as { role?: unknown; content?: unknown };
    const r = role === 'developer' ? 'system' : role;
    if (r !== 'system' && r !== 'user' && r !== 'assistant') {
      throw new BadRequestError(`messages[${i}].role ${JSON.stringify(role)} is not supported (system, developer, user, assistant)`);
    }
    return { role: r, content: textOf(content, i) };
  });
}

function textOf(content: unknown, i: number): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        if (typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'text' && typeof (p as { text?: unknown }).text === 'string') {
          return (p as { text: string }).text;
        }
        throw new BadRequestError(`messages[${i}].content: only text parts are supported`);
      })
      .join('');
  }
  throw new BadRequestError(`messages[${i}].content must be a string or an array of text parts`);
}

/**
 * The system-message rule for entities: a client's system messages are never stored. They are
 * accepted (and ignored) when empty or equal to the entity's instructions; any other text is a
 * 400, because the entity's standing instructions are its system prompt and a per-client prompt
 * would be silently lost on the next request. Returns the conversation without them.
 */
export function dropSystemMessages(messages: ClientMessage[], instructions: string, entityRef: string): ClientMessage[] {
  for (const m of messages) {
    if (m.role !== 'system' || m.content.trim() === '' || m.content.trim() === instructions.trim()) continue;
    throw new BadRequestError(
      'a system message that differs from the entity\'s instructions is not accepted: the entity keeps its own instructions',
      { hint: `remove the client's system prompt, or make it the entity's: mgpt entities update ${entityRef} --instructions ...` },
    );
  }
  return messages.filter((m) => m.role !== 'system');
}

/** One transcript message, as reconciliation needs it. */
export interface SeenMessage {
  seq: number;
  role: 'user' | 'assistant';
  content: string;
}

export type Reconciled =
  | { kind: 'new'; content: string }
  /** `index` is the client's (system messages not counted); `seq` the transcript message it stands against. */
  | { kind: 'conflict'; index: number; seq: number; message: string };

/**
 * Reconciles a client's conversation (system messages removed) with the transcript. The client's
 * messages are aligned with the transcript from seq 1: all but the last must equal the whole
 * transcript, and the last is the one new user message. One exception: a lone user message is
 * always new (a client that starts a fresh chat on an entity continues it, as the entity route does).
 * `transcript` holds at least the first `messages.length` messages (or all of them).
 */
export function reconcile(messages: ClientMessage[], transcript: SeenMessage[], transcriptLength: number): Reconciled {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'user') throw new BadRequestError('the last message must be a user message');
  if (last.content.trim() === '') throw new BadRequestError('the last user message is empty');
  if (messages.length === 1) return { kind: 'new', content: last.content };
  for (const [i, m] of messages.entries()) {
    const want = i % 2 === 0 ? 'user' : 'assistant';
    if (m.role !== want) throw new BadRequestError(`messages must alternate user and assistant, starting with user; message ${i} is ${m.role}`);
  }
  const shared = Math.min(messages.length, transcriptLength);
  for (let i = 0; i < shared; i++) {
    const t = transcript[i];
    if (messages[i].content === t.content) continue;
    return {
      kind: 'conflict',
      index: i,
      seq: t.seq,
      message: `message ${i} (${messages[i].role}) differs from the entity's transcript message ${t.seq}: ${preview(messages[i].content)} vs ${preview(t.content)}`,
    };
  }
  if (messages.length <= transcriptLength) {
    const i = messages.length - 1;
    return {
      kind: 'conflict',
      index: i,
      seq: transcript[i].seq,
      message: `message ${i} (user) is the entity's transcript message ${transcript[i].seq}, which was already answered (the transcript has ${transcriptLength} messages); a regenerated reply is a branch`,
    };
  }
  if (messages.length > transcriptLength + 1) {
    return {
      kind: 'conflict',
      index: transcriptLength,
      seq: transcriptLength + 1,
      message: `message ${transcriptLength} (${messages[transcriptLength].role}) is not in the entity's transcript, which has ${transcriptLength} messages`,
    };
  }
  return { kind: 'new', content: last.content };
}

/** The 409 for a contradicting history, with the way out. */
export function historyConflict(r: Extract<Reconciled, { kind: 'conflict' }>, header: string): ConflictError {
  return new ConflictError(`the conversation contradicts the entity's transcript: ${r.message}`, {
    hint: `send ${header}: branch to continue on a new entity forked at that message`,
  });
}

function preview(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}...` : s);
}
