import type { ChunkEvent } from '../../core/wire/completion-stream.js';
import { BadRequestError, MgptError } from '../../core/errors.js';
import type { Entity } from '../../core/wire/entity-types.js';
import { type GenerationResponse, UNIVERSE_MODEL } from '../../core/wire/universe-types.js';
import { type ResponseDelta, billedTokens } from '../universes/respond.js';
import { COMPLETION_MODELS, ENTITY_PREFIX, type ClientMessage, chatMessage, checkMessages, parseFacadeModel, unknownModel } from './chat-facade.js';
import { parseChatOptions } from './chat-options.js';
import { EntityChat } from './entity-chat.js';
import { completeStateless } from '../generation/complete.js';
import { primed } from '../../core/primed.js';
import type { ChatCall, ChatReply, ChatRequest, FacadeDeps, FacadeModel, FacadeServices, ParsedChat } from './chat-types.js';

/** The opt-in request header that branches on a contradicting history instead of answering statelessly. */
export const BRANCH_HEADER = 'Mgpt-On-Conflict';

export type { ChatCall, ChatPolicyOptions, ChatReply, ChatRequest, FacadeDeps, FacadeModel, FacadeServices, ParsedChat } from './chat-types.js';

/** The OpenAI-compatible facade over the engine (docs/design.md#extensions-beyond-the-wire-contracts): GET /v1/models, POST /v1/chat/completions. */
export class ChatService {
  constructor(
    private readonly engine: FacadeServices,
    private readonly deps: FacadeDeps,
  ) {}

  /**
   * Platform ids and text aliases, then each of the account's entities once: `entity:<name>` when
   * the name is unique, else `entity:<id>` (a picker such as Open WebUI's shows every listed id, so
   * listing both showed each entity twice); `entity:<id>` is still accepted by every route.
   */
  async models(accountId: string): Promise<{ object: 'list'; data: FacadeModel[] }> {
    const ids = [...COMPLETION_MODELS.map((m) => m.id), ...this.deps.namedModels];
    const platform = ids.map((id) => ({ id, object: 'model' as const, created: 0, owned_by: 'mgpt' }));
    const { data } = await this.engine.entities.list(accountId);
    const names = new Map<string, number>();
    for (const e of data) if (e.name) names.set(e.name, (names.get(e.name) ?? 0) + 1);
    const entities = data.flatMap((e) => {
      const m = (id: string): FacadeModel => ({ id: ENTITY_PREFIX + id, object: 'model', created: Math.floor(Date.parse(e.created_at) / 1000), owned_by: accountId });
      return [m(e.name && names.get(e.name) === 1 ? e.name : e.id)];
    });
    return { object: 'list', data: [...platform, ...entities] };
  }

  /** One model by id: any id the list shows, and any entity reference that resolves (a prefix too). */
  async model(id: string, accountId: string): Promise<FacadeModel> {
    const target = parseFacadeModel(id, this.deps.namedModels);
    if (target.kind === 'platform') return { id, object: 'model', created: 0, owned_by: 'mgpt' };
    if (target.kind === 'universe') {
      const u = await this.engine.universes.resolve(target.ref, (await this.engine.accounts.find(accountId)).userId);
      return { id: `universe:${u}`, object: 'model', created: 0, owned_by: accountId };
    }
    const e = await this.resolveEntity(id, target.ref, accountId);
    return { id, object: 'model', created: Math.floor(Date.parse(e.created_at) / 1000), owned_by: accountId };
  }

  /** POST /v1/chat/completions: the body is parsed here, where it enters, then answered as a parsed chat. */
  chat(req: ChatRequest): Promise<ChatReply> {
    const { body, ...call } = req;
    // The model is checked first: an unknown model is a 404 whatever else the body gets wrong.
    const model = parseFacadeModel(body.model, this.deps.namedModels) && (body.model as string);
    return this.answer({ model, messages: checkMessages(body.messages), options: parseChatOptions(body) }, call);
  }

  /** A chat in the engine's terms (the local backend's completions come so): a stored or universe turn, or a stateless answer, by its model. */
  async answer(chat: ParsedChat, req: ChatCall): Promise<ChatReply> {
    const { messages, options } = chat;
    const target = parseFacadeModel(chat.model, this.deps.namedModels);
    if (target.kind === 'platform') {
      const events = completeStateless(this.deps, {
        model: target.id, messages: messages.map(chatMessage), ...options,
        accountId: req.accountId, userId: req.userId, key: req.idempotencyKey, signal: req.signal, allowance: req.allowance, keyId: req.keyId,
      });
      return { turn: 'stateless', events: await primed(events) };
    }
    if (target.kind === 'universe') return this.universeTurn(target.ref, messages, req);
    const entity = await this.resolveEntity(chat.model, target.ref, req.accountId);
    return new EntityChat(this.engine, this.deps, req, options).reply(entity, target.ref, messages);
  }

  /** A universe turn: the universe keeps its own history, so only the client's last user message is sent. */
  private async universeTurn(ref: string, messages: ClientMessage[], req: ChatCall): Promise<ChatReply> {
    const last = messages[messages.length - 1];
    if (!last || last.role !== 'user') throw new BadRequestError('the last message must be a user message');
    const universe = await this.engine.universes.resolve(ref, req.userId);
    const head = { id: `chatcmpl-${this.deps.newId()}`, model: `universe:${universe}`, created: Math.floor(this.deps.clock.now() / 1000) };
    const body = { model: UNIVERSE_MODEL, universe, userInput: last.content, ...(req.idempotencyKey ? { requestId: req.idempotencyKey } : {}) };
    const turn = this.engine.respondEvents(body, { userId: req.userId, signal: req.signal, allowance: req.allowance });
    return { turn: 'stored', events: await primed(universeChunks(turn, head)) };
  }

  private async resolveEntity(model: string, ref: string, accountId: string): Promise<Entity> {
    try {
      return await this.engine.entities.resolve(ref, accountId);
    } catch (err) {
      if (err instanceof MgptError && err.status === 404) throw unknownModel(model);
      throw err;
    }
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
      yield { type: 'done', completion: completionOf(head, next.value), billed: billedTokens(next.value) };
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
