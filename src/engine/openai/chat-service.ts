import type { ChunkEvent } from '../../core/completion-stream.js';
import { BadRequestError, ConflictError, MgptError, NotFoundError } from '../../core/errors.js';
import type { Entity } from '../../core/entity-types.js';
import { type GenerationResponse, UNIVERSE_MODEL } from '../../core/universe-types.js';
import type { ResponseDelta } from '../universes/respond.js';
import { branchIdFor, planBranch } from './chat-branch.js';
import {
  COMPLETION_MODELS,
  ENTITY_PREFIX,
  type ClientMessage,
  type SeenMessage,
  checkMessages,
  dropSystemMessages,
  historyConflict,
  parseFacadeModel,
  reconcile,
  unknownModel,
} from './chat-facade.js';
import { completeStateless } from '../generation/complete.js';
import { primed } from '../../core/primed.js';
import type { EngineDeps } from '../deps.js';
import type { Engine } from '../engine.js';

/** The opt-in request header that branches on a contradicting history instead of answering 409. */
export const BRANCH_HEADER = 'Mgpt-On-Conflict';
/** The text model a `universe:<id>` turn uses. */

export interface FacadeModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

export interface ChatRequest {
  model: unknown;
  messages: unknown;
  idempotencyKey?: string;
  /** Branch (a new entity) instead of a 409 when the history contradicts the transcript. */
  branch: boolean;
  accountId: string;
  userId: string;
  signal?: AbortSignal;
}

export interface ChatReply {
  /** The entity the turn went to (a new one when it branched). */
  entityId?: string;
  /** Set when the turn branched: the entity it was forked from. */
  branchedFrom?: string;
  events: AsyncGenerator<ChunkEvent>;
}

/** The OpenAI-compatible facade over the engine (SPEC section 8): GET /v1/models, POST /v1/chat/completions. */
export class ChatService {
  constructor(
    private readonly engine: Engine,
    private readonly deps: EngineDeps,
  ) {}

  /** Platform ids and text aliases, then the account's entities (`entity:<name>` when unique, always `entity:<id>`). */
  async models(accountId: string): Promise<{ object: 'list'; data: FacadeModel[] }> {
    const platform = COMPLETION_MODELS.map((m) => ({ id: m.id, object: 'model' as const, created: 0, owned_by: 'mgpt' }));
    const { data } = await this.engine.entities.list(accountId);
    const names = new Map<string, number>();
    for (const e of data) if (e.name) names.set(e.name, (names.get(e.name) ?? 0) + 1);
    const entities = data.flatMap((e) => {
      const m = (id: string): FacadeModel => ({ id: ENTITY_PREFIX + id, object: 'model', created: Math.floor(Date.parse(e.created_at) / 1000), owned_by: accountId });
      return e.name && names.get(e.name) === 1 ? [m(e.name), m(e.id)] : [m(e.id)];
    });
    return { object: 'list', data: [...platform, ...entities] };
  }

  /** One model by id: any id the list shows, and any entity reference that resolves (a prefix too). */
  async model(id: string, accountId: string): Promise<FacadeModel> {
    const target = parseFacadeModel(id);
    if (target.kind === 'platform') return { id, object: 'model', created: 0, owned_by: 'mgpt' };
    if (target.kind === 'universe') {
      const u = await this.engine.universes.resolve(target.ref, (await this.engine.accounts.find(accountId)).userId);
      return { id: `universe:${u}`, object: 'model', created: 0, owned_by: accountId };
    }
    const e = await this.resolveEntity(id, target.ref, accountId);
    return { id, object: 'model', created: Math.floor(Date.parse(e.created_at) / 1000), owned_by: accountId };
  }

  async chat(req: ChatRequest): Promise<ChatReply> {
    const target = parseFacadeModel(req.model);
    const messages = checkMessages(req.messages);
    if (target.kind === 'platform') {
      const events = completeStateless(this.deps, {
        model: target.id, messages, accountId: req.accountId, userId: req.userId, key: req.idempotencyKey, signal: req.signal,
      });
      return { events: await primed(events) };
    }
    if (target.kind === 'universe') return this.universeTurn(target.ref, messages, req);
    return this.entityTurn(req.model as string, target.ref, messages, req);
  }

  private async entityTurn(model: string, ref: string, all: ClientMessage[], req: ChatRequest): Promise<ChatReply> {
    const entity = await this.resolveEntity(model, ref, req.accountId);
    const messages = dropSystemMessages(all, entity.instructions, ref);
    const last = messages[messages.length - 1];
    // A retry with the key of an answered message replays that reply, however the history now compares.
    const key = req.idempotencyKey;
    if (key !== undefined && last?.role === 'user' && (await this.deps.store.idempotency.get(entity.id, key))) {
      return this.send(entity.id, last.content, req);
    }
    const length = entity.transcript.messages;
    const r = reconcile(messages, await this.transcriptHead(entity.id, Math.min(messages.length, length), req.accountId), length);
    if (r.kind === 'new') return this.send(entity.id, r.content, req);
    if (!req.branch) throw historyConflict(r, BRANCH_HEADER);
    // The fork keeps the complete turns both sides share, then the client's own history.
    const turn = await this.branchTurn(entity, messages.slice(0, -1), r.index, last.content, req);
    return { entityId: turn.id, branchedFrom: entity.id, events: await primed(turn.events) };
  }

  /**
   * The turn on the branch: planned now and stored only by that turn's commit, or (for a retry
   * with the same Idempotency-Key) the branch an earlier request stored, which replays its reply.
   */
  private async branchTurn(original: Entity, history: ClientMessage[], shared: number, content: string, req: ChatRequest) {
    const { deps, entities } = this.engine;
    const key = req.idempotencyKey;
    const id = key === undefined ? undefined : branchIdFor(original.id, key);
    const input = { content, idempotencyKey: key, signal: req.signal };
    if (id !== undefined && (await this.exists(id, req.accountId))) return { id, events: entities.send(id, input, req.accountId) };
    const row = await entities.row(original.id, req.accountId);
    const create = await planBranch(deps, { original: row, history, sharedMessages: shared, id });
    return { id: create.entity.id, events: entities.sendCreating(create, input) };
  }

  private async exists(id: string, accountId: string): Promise<boolean> {
    try {
      await this.engine.entities.get(id, accountId);
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  private async send(entityId: string, content: string, req: ChatRequest): Promise<ChatReply> {
    const turn = this.engine.entities.send(entityId, { content, idempotencyKey: req.idempotencyKey, signal: req.signal }, req.accountId);
    return { entityId, events: await primed(turn) };
  }

  /** A universe turn: the universe keeps its own history, so only the client's last user message is sent. */
  private async universeTurn(ref: string, messages: ClientMessage[], req: ChatRequest): Promise<ChatReply> {
    const last = messages[messages.length - 1];
    if (!last || last.role !== 'user') throw new BadRequestError('the last message must be a user message');
    const universe = await this.engine.universes.resolve(ref, req.userId);
    const head = { id: `chatcmpl-${this.deps.newId()}`, model: `universe:${universe}`, created: Math.floor(this.deps.clock.now() / 1000) };
    const body = { model: UNIVERSE_MODEL, universe, userInput: last.content, ...(req.idempotencyKey ? { requestId: req.idempotencyKey } : {}) };
    const turn = this.engine.respondEvents(body, { userId: req.userId, signal: req.signal });
    return { events: await primed(universeChunks(turn, head)) };
  }

  private async resolveEntity(model: string, ref: string, accountId: string): Promise<Entity> {
    try {
      return await this.engine.entities.resolve(ref, accountId);
    } catch (err) {
      if (err instanceof MgptError && err.status === 404) throw unknownModel(model);
      throw err;
    }
  }

  /** The transcript's first `n` messages, in pages. */
  private async transcriptHead(id: string, n: number, accountId: string): Promise<SeenMessage[]> {
    const out: SeenMessage[] = [];
    while (out.length < n) {
      const page = await this.engine.entities.messages(id, { after: out.length, limit: Math.min(500, n - out.length) }, accountId);
      out.push(...page.data.map((m) => ({ seq: m.seq, role: m.role, content: m.content })));
      if (!page.has_more) break;
    }
    return out;
  }
}

/**
 * A universe turn as the facade's chunk events. The start is announced with the first output (or
 * the response, when nothing streamed), so a refusal before it still gets its own status.
 */
async function* universeChunks(
  turn: AsyncGenerator<ResponseDelta, GenerationResponse>,
  head: { id: string; model: string; created: number },
): AsyncGenerator<ChunkEvent> {
  try {
    for (let started = false; ; started = true) {
      const next = await turn.next();
      if (!started) yield { type: 'start', ...head };
      if (!next.done) {
        yield { type: 'delta', text: next.value.text };
        continue;
      }
      yield { type: 'done', completion: completionOf(head, next.value) };
      return;
    }
  } finally {
    // A consumer that stopped reading: the turn is cancelled and frees its universe.
    await turn.return(undefined as never);
  }
}

function completionOf(head: { id: string; model: string; created: number }, res: GenerationResponse): Extract<ChunkEvent, { type: 'done' }>['completion'] {
  const u = res.usageSettlement;
  return {
    ...head, object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: res.assistantRaw }, finish_reason: 'stop' }],
    usage: { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.inputTokens + u.outputTokens },
  };
}
