import { BadRequestError } from '../../../core/errors.js';
import type { ChunkEvent } from '../../../core/wire/completion-stream.js';
import type { TurnEvent } from '../../../core/wire/entity-types.js';
import type { ResponseStep } from '../../../core/wire/response-stream.js';
import type { CompactedResponse, DeletedResponse, ItemList, ResponseObject, WireItem } from '../../../core/wire/responses-types.js';
import type { ResponseRow } from '../../../store/types.js';
import type { FacadeDeps } from '../chat-types.js';
import { type ResponseHead, finishedResponse, pendingResponse, responseUsage, wireInput } from './response-object.js';
import { type ResponseRequest, parseResponseRequest } from './response-request.js';
import { type ResponseTarget, resolveTarget, responseNotFound } from './response-target.js';
import { ResponseTurn, type StartedTurn } from './response-turn.js';
import type { ResponsesCall, ResponsesEngine } from './responses-types.js';
import { type ListQuery, pageOf } from './item-pages.js';
import { compactEntity } from './response-compact.js';

export type { ResponsesCall, ResponsesEngine } from './responses-types.js';

/** What POST /v1/responses answers with: the Mgpt- headers' facts, and the response's steps. */
export interface ResponseReply {
  turn: StartedTurn['turn'];
  entityId?: string;
  branchedFrom?: string;
  recalled?: number;
  dropped?: number;
  /** Tools the request carried that are not function tools: left out. */
  ignoredTools: string[];
  replayed?: boolean;
  steps: AsyncGenerator<ResponseStep>;
}


/**
 * OpenAI's Responses API over entities (docs/openai-clients.md#the-responses-api): a response on an
 * `entity:` model is a turn; `previous_response_id` continues the entity from its latest response
 * or branches from an older one; `store: false` and platform models answer statelessly. The
 * response rows name turns; the transcript stays the entity's, append-only.
 */
export class ResponsesService {
  constructor(
    private readonly engine: ResponsesEngine,
    private readonly deps: FacadeDeps,
  ) {}

  /** A new response id: `resp_` and 32 hex digits. */
  newId(): string {
    return `resp_${this.deps.newId().replace(/-/g, '')}`;
  }

  async create(body: Record<string, unknown>, call: ResponsesCall): Promise<ResponseReply> {
    const req = parseResponseRequest(body);
    const target = await resolveTarget(this.engine, this.deps, req, call.accountId);
    const replay = await this.replayed(target, call);
    if (replay) return { turn: 'stored', entityId: replay.entityId, ignoredTools: req.ignoredTools, replayed: true, steps: replaySteps(JSON.parse(replay.body) as ResponseObject) };
    const store = req.store && target.kind === 'entity';
    const head: ResponseHead = {
      id: call.responseId, createdAt: Math.floor(this.deps.clock.now() / 1000), model: req.model, store,
      previousResponseId: req.previousResponseId ?? null, conversation: req.conversation ?? null,
    };
    const started = await new ResponseTurn(this.engine.entities, this.deps, call, req).start(target);
    const { events, rowFor, stored, ...facts } = started;
    const naming: StartedTurn['rowFor'] = (d, base) => rowFor(d, base);
    return { ...facts, ignoredTools: req.ignoredTools, steps: this.steps(events, pendingResponse(head, req), req, { rowFor: naming, stored }, call) };
  }

  async retrieve(id: string, accountId: string): Promise<ResponseObject> {
    return JSON.parse((await this.row(id, accountId)).body) as ResponseObject;
  }

  async inputItems(id: string, accountId: string, q: ListQuery): Promise<ItemList> {
    const items = JSON.parse((await this.row(id, accountId)).input) as WireItem[];
    return pageOf(items, q);
  }

  /**
   * Forgets the response object: its id no longer resolves (retrieve, input_items,
   * previous_response_id). The turn it named stays in the entity's transcript, which is never
   * rewritten; deleting the entity is what removes its messages.
   */
  async delete(id: string, accountId: string): Promise<DeletedResponse> {
    if (!(await this.deps.store.responses.delete(accountId, id))) throw responseNotFound(id);
    return { id, object: 'response', deleted: true };
  }

  /** POST /v1/responses/compact: the entity's rotation, now (response-compact.ts). */
  async compact(body: Record<string, unknown>, accountId: string, signal?: AbortSignal): Promise<CompactedResponse> {
    return compactEntity(this.engine, this.deps, body, accountId, signal, this.newId());
  }

  private async row(id: string, accountId: string): Promise<ResponseRow> {
    const row = await this.deps.store.responses.get(accountId, id);
    if (!row) throw responseNotFound(id);
    return row;
  }

  /** The response an Idempotency-Key already made on the entity: a retry gets it again, and nothing runs twice. */
  private async replayed(target: ResponseTarget, call: ResponsesCall): Promise<ResponseRow | undefined> {
    if (call.idempotencyKey === undefined || target.kind !== 'entity') return undefined;
    return this.deps.store.responses.byKey(target.entity.id, call.idempotencyKey);
  }

  /** The turn's events as steps: announced, each text delta, then (once its row is stored) the finished response. */
  private async *steps(
    events: AsyncGenerator<TurnEvent | ChunkEvent>, pending: ResponseObject, req: ResponseRequest,
    naming: Pick<StartedTurn, 'rowFor' | 'stored'>, call: ResponsesCall,
  ): AsyncGenerator<ResponseStep> {
    try {
      yield { type: 'start', response: pending };
      for await (const ev of events) {
        if (ev.type === 'delta') yield { type: 'delta', text: ev.text };
        if (ev.type !== 'done') continue;
        const response = finishedResponse(pending, ev.completion);
        const base = { id: pending.id, accountId: call.accountId, body: JSON.stringify(response), input: JSON.stringify(wireInput(pending.id, req.input)), createdAt: this.deps.clock.iso(), idempotencyKey: call.idempotencyKey ?? null };
        const row = naming.rowFor(ev, base);
        if (row) await this.deps.store.responses.insert(row);
        if (row?.replySeq) await naming.stored?.();
        yield { type: 'done', response, completion: ev.completion, billed: ev.billed };
      }
    } finally {
      await events.return(undefined);
    }
  }
}

async function* replaySteps(response: ResponseObject): AsyncGenerator<ResponseStep> {
  const pending: ResponseObject = { ...response, status: 'in_progress', output: [], usage: null };
  yield { type: 'start', response: pending };
  const u = response.usage ?? responseUsage({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  const text = response.output_text ?? '';
  if (text) yield { type: 'delta', text };
  const usage = { prompt_tokens: u.input_tokens, completion_tokens: u.output_tokens, total_tokens: u.total_tokens };
  yield { type: 'done', response, completion: { id: response.id, object: 'chat.completion', created: response.created_at, model: response.model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage } };
}

/** A body that is not a JSON object: the route's one check before the service reads it. */
export function requireObject(b: unknown): Record<string, unknown> {
  if (typeof b !== 'object' || b === null || Array.isArray(b)) throw new BadRequestError('the request body must be a JSON object');
  return b as Record<string, unknown>;
}
