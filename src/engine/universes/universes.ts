import { BadRequestError, ForbiddenError, NotFoundError } from '../../core/errors.js';
import {
  type ConversationTurn,
  type CreateUniverseInput,
  type CreatedUniverse,
  LOCAL_USER_ID,
  type RuntimeMessage,
  type UniverseDoc,
  type UniverseSummary,
} from '../../core/wire/universe-types.js';
import type { UniverseMessageRow, UniverseRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { parseCreateUniverse } from '../../core/wire/universe-input.js';
import { sha256 } from '../../core/hash.js';
import { UUID } from '../../core/ids.js';
import { MIN_ID_PREFIX, pickByRef } from '../../core/ref.js';

/** What universes read: the store, the clock, ids and the stored prompts. */
type UniverseDeps = Pick<EngineDeps, 'store' | 'clock' | 'newId' | 'prompts'>;

/** Universes of seed 000: a frozen prompt snapshot plus a runtime conversation. */

export class UniverseService {
  constructor(private readonly deps: UniverseDeps) {}

  async create(input: CreateUniverseInput, userId = LOCAL_USER_ID): Promise<CreatedUniverse> {
    parseCreateUniverse(input);
    const prompt = await this.deps.prompts.get(input.storedPrompt);
    const now = this.deps.clock.iso();
    const row: UniverseRow = {
      id: this.deps.newId(),
      userId,
      displayName: input.displayName ?? null,
      storedPrompt: prompt.name,
      // The snapshot: later edits of the file change nothing for this universe.
      promptText: prompt.text,
      responseFormat: prompt.responseFormat ? JSON.stringify(prompt.responseFormat) : null,
      additionalInstructions: prompt.additionalInstructions ?? null,
      promptFingerprint: `sha256:${sha256(JSON.stringify([prompt.text, prompt.responseFormat ?? null, prompt.additionalInstructions ?? null]))}`,
      messages: 0,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.store.universes.insert(row);
    return { universe: row.id, userId, prompt: { storedPrompt: row.storedPrompt, stored: true } };
  }

  async list(userId = LOCAL_USER_ID): Promise<UniverseSummary[]> {
    return (await this.deps.store.universes.list(userId, 200)).map(summary);
  }

  /** The universe document (the inline `universeDoc` shape); the prompt text is never in it. */
  async doc(id: string, userId = LOCAL_USER_ID): Promise<UniverseDoc> {
    const u = await this.owned(id, userId);
    const rows = await this.deps.store.universes.messages(id);
    return {
      id: u.id,
      userId: u.userId,
      ...(u.displayName !== null ? { displayName: u.displayName } : {}),
      prompt: { storedPrompt: u.storedPrompt, fingerprint: u.promptFingerprint },
      conversation: callerView(rows),
      runtime: { conversation: rows.map(toRuntime) },
    };
  }

  async summary(id: string, userId = LOCAL_USER_ID): Promise<UniverseSummary> {
    return summary(await this.owned(id, userId));
  }

  /** A UNIVERSE argument: its id, a unique id prefix of 4+ characters, or its display name. */
  async resolve(ref: string, userId = LOCAL_USER_ID): Promise<string> {
    if (UUID.test(ref)) return (await this.owned(ref, userId)).id;
    const prefix = ref.length >= MIN_ID_PREFIX ? ref.toLowerCase() : null;
    const rows = await this.deps.store.universes.matching(userId, ref, prefix, 11);
    return pickByRef('universe', ref, rows.map((u) => ({ id: u.id, name: u.displayName })), 'list universes with: mgpt universes list').id;
  }

  /** 400 for a malformed id, 404 for an unknown one, 403 for another user's. */
  async owned(id: string, userId: string): Promise<UniverseRow> {
    if (typeof id !== 'string' || !UUID.test(id)) {
      throw new BadRequestError('universe must be a UUID', { errors: [{ field: 'universe', message: 'must be a UUID' }] });
    }
    const u = await this.deps.store.universes.get(id);
    if (!u) throw new NotFoundError('Universe not found', { hint: 'list universes with: mgpt universes list' });
    if (u.userId !== userId) throw new ForbiddenError('the universe is owned by another user');
    return u;
  }
}

function summary(u: UniverseRow): UniverseSummary {
  return {
    id: u.id,
    userId: u.userId,
    displayName: u.displayName,
    storedPrompt: u.storedPrompt,
    messages: u.messages,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  };
}

export function toRuntime(r: UniverseMessageRow): RuntimeMessage {
  if (r.role === 'user') return { role: 'user', content: r.content ?? '' };
  if (r.role === 'tool') {
    return { role: 'tool', tool_call_id: r.toolCallId ?? '', ...(r.toolName ? { name: r.toolName } : {}), content: r.content ?? '' };
  }
  return r.toolCalls ? { role: 'assistant', content: r.content, tool_calls: JSON.parse(r.toolCalls) } : { role: 'assistant', content: r.content };
}

/** The turns as the caller sees them: user inputs and final assistant texts. */
export function callerView(rows: Array<Pick<UniverseMessageRow, 'role' | 'content' | 'toolCalls' | 'createdAt'>>): ConversationTurn[] {
  const out: ConversationTurn[] = [];
  for (const r of rows) {
    if (r.role === 'user') out.push({ role: 'user', content: r.content ?? '', at: r.createdAt });
    else if (r.role === 'assistant' && !r.toolCalls) out.push({ role: 'assistant', content: r.content ?? '', at: r.createdAt });
  }
  return out;
}
