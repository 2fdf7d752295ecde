import { BadRequestError, ContextOverflowError, NotFoundError } from '../../core/errors.js';
import { type Fitted, fitStateless, learnOverflow } from './stateless-fit.js';
import type { Entity, TurnEvent } from '../../core/wire/entity-types.js';
import { sha256 } from '../../core/hash.js';
import { prepend, primed } from '../../core/primed.js';
import type { ChatMessage } from '../../providers/spec.js';
import type { TurnExtras } from '../entities/turn.js';
import { completeStateless } from '../generation/complete.js';
import { storedFor } from '../generation/idempotency.js';
import { branchIdFor, planBranch } from './chat-branch.js';
import { type ClientMessage, chatMessage, splitSystem, splitToolRounds } from './chat-facade.js';
import type { ChatOptions } from './chat-options.js';
import { KNOWN_SIDE_PATTERNS, type SeenMessage, type TurnKind, align, isSideRequest, normalize, turnOf } from './chat-policy.js';
import type { ChatCall, ChatReply, FacadeDeps, FacadeServices } from './chat-types.js';

/**
 * A turn's reply, run to its first event: a reply known by then to call tools is not a stored turn;
 * what automatic recall added is known by then too (it runs before the reply).
 */
async function turnReply(entityId: string, kind: TurnKind, events: AsyncGenerator<TurnEvent>): Promise<ChatReply> {
  const first = await events.next();
  const start = !first.done && first.value.type === 'start' ? first.value : undefined;
  const turn = start?.stores === false ? turnOf(kind, 'tool_calls') : kind;
  return { entityId, turn, ...(start?.recalledMessages ? { recalled: start.recalledMessages } : {}), events: prepend(first, events) };
}

/** A request to an `entity:` model, read: the chat, the turn's tool round, and what the request adds. */
interface Read {
  entity: Entity;
  ref: string;
  conversation: ClientMessage[];
  /** The tool round after the last user message, as the client sent it (extras.round is it for the model). */
  round: ClientMessage[];
  extras: TurnExtras;
  content: string;
}

/**
 * One request to an `entity:` model, under the policy of chat-policy.ts: a stored turn, a side
 * request, a regenerate, or (when the history contradicts the transcript) a stateless answer or,
 * with Mgpt-On-Conflict: branch, a turn on a branch.
 */
export class EntityChat {
  constructor(
    private readonly engine: FacadeServices,
    private readonly deps: FacadeDeps,
    private readonly req: ChatCall,
    private readonly options: ChatOptions,
  ) {}

  async reply(entity: Entity, ref: string, messages: ClientMessage[]): Promise<ChatReply> {
    const r = this.read(entity, ref, messages);
    const patterns = [...KNOWN_SIDE_PATTERNS, ...(this.req.policy?.sidePatterns ?? [])];
    if (isSideRequest(r.conversation, patterns, this.req.side)) return this.unstored(r, 'side', await this.windowContext(r));
    // A retry with the key of an answered message replays that reply, however the history now compares.
    const key = this.req.idempotencyKey;
    if (key !== undefined && (await storedFor(this.deps.store, { kind: 'entity', entityId: entity.id }, key))) return this.stored(entity.id, r);
    const length = entity.transcript.messages;
    const a = align(r.conversation, await this.tail(entity.id, r.conversation.length + 1, length), length);
    if (a.kind === 'new') return this.stored(entity.id, r);
    if (a.kind === 'regenerate') return this.unstored(r, 'regenerated', await this.windowContext(r, true));
    if (this.req.branch) return this.branched(r, a.divergence);
    return this.unstored(r, 'stateless', this.ownContext(r));
  }

  private read(entity: Entity, ref: string, messages: ClientMessage[]): Read {
    const { system, rest } = splitSystem(messages, entity.instructions, ref, this.req.policy?.strictSystem === true);
    const { conversation, round } = splitToolRounds(rest);
    const last = conversation[conversation.length - 1];
    if (!last || last.role !== 'user') throw new BadRequestError('the last message must be a user message (tool results may follow it)');
    if (normalize(last.content) === '') throw new BadRequestError('the last user message is empty');
    const { sampling, tools, toolChoice } = this.options;
    const extras: TurnExtras = { system, sampling, tools, toolChoice, round: round.map(chatMessage) };
    return { entity, ref, conversation, round, extras, content: last.content };
  }

  /** A stored turn: the user message and the final reply join the transcript. */
  private async stored(entityId: string, r: Read, turn: TurnKind = 'stored'): Promise<ChatReply> {
    return turnReply(entityId, turn, this.engine.entities.send(entityId, this.turnInput(r), this.req.accountId));
  }

  /**
   * The stored turn's input. A streamed reply the client stops (it closes the stream) is stored as
   * far as it went, as the client keeps it; a reply that does not stream is cancelled instead.
   */
  private turnInput(r: Read) {
    const { idempotencyKey, signal, allowance, keyId } = this.req;
    if (!this.options.streamed) return { content: r.content, idempotencyKey, signal, extras: { ...r.extras, buffered: true, facade: true, allowance, keyId } };
    return { content: r.content, idempotencyKey, extras: { ...r.extras, stop: signal, facade: true, allowance, keyId } };
  }

  /**
   * A reply in the entity's voice that nothing remembers: logged and billed as a generation, not a
   * turn, and fitted to the model (the oldest messages dropped when they do not fit, as the reply
   * says). A refusal teaches the route its context, and the answer is fitted again once.
   */
  private async unstored(r: Read, turn: TurnKind, messages: ChatMessage[]): Promise<ChatReply> {
    const model = r.entity.model;
    const fitted = await fitStateless(this.deps, model, messages, r.extras.round ?? []);
    try {
      return await this.answer(r, turn, fitted);
    } catch (err) {
      if (!(err instanceof ContextOverflowError)) throw err;
      await learnOverflow(this.deps, model, err, fitted.messages);
      const again = await fitStateless(this.deps, model, messages, r.extras.round ?? []);
      if (again.dropped <= fitted.dropped) throw err;
      return this.answer(r, turn, again);
    }
  }

  private async answer(r: Read, turn: TurnKind, fitted: Fitted): Promise<ChatReply> {
    const { entity } = r;
    const events = completeStateless(this.deps, {
      model: entity.model, shownModel: entity.model, messages: fitted.messages,
      sampling: r.extras.sampling, tools: r.extras.tools, toolChoice: r.extras.toolChoice,
      mode: turn === 'side' || turn === 'regenerated' ? turn : 'stateless', entityId: entity.id,
      accountId: this.req.accountId, userId: this.req.userId, key: this.req.idempotencyKey, signal: this.req.signal, streamed: this.options.streamed,
      allowance: this.req.allowance,
      keyId: this.req.keyId,
    });
    return { entityId: entity.id, turn, events: await primed(events), ...(fitted.dropped ? { dropped: fitted.dropped } : {}) };
  }

  /**
   * The entity's instructions and window (what its next turn would see), then the request's own
   * message. A regenerate leaves out the last turn it answers again.
   */
  private async windowContext(r: Read, withoutLastTurn = false): Promise<ChatMessage[]> {
    const window = await this.engine.entities.context(r.entity.id, this.req.accountId);
    const messages = withSystem(window, r.extras.system);
    if (withoutLastTurn) dropLastTurn(messages, r.content);
    return [...messages, { role: 'user', content: r.content }];
  }

  /** A chat the transcript does not hold (an edit): the entity's instructions and the client's own messages. */
  private ownContext(r: Read): ChatMessage[] {
    const instructions: ChatMessage[] = r.entity.instructions ? [{ role: 'system', content: r.entity.instructions }] : [];
    return [...withSystem(instructions, r.extras.system), ...r.conversation.map(chatMessage)];
  }

  /**
   * The turn on a branch. The same edited chat always names the same branch (its id is derived
   * from the messages up to the edit, or from the Idempotency-Key), so a client that sends the
   * header on every request continues its branch instead of forking again.
   */
  private async branched(r: Read, divergence: number): Promise<ChatReply> {
    const { entities } = this.engine;
    const original = r.entity;
    const upToEdit = r.conversation.slice(0, divergence + 1).filter((m) => m.role === 'user').map((m) => normalize(m.content));
    const id = branchIdFor(original.id, this.req.idempotencyKey ?? `chat:${sha256(JSON.stringify(upToEdit))}`);
    if (await this.exists(id)) {
      const branch = await entities.get(id, this.req.accountId);
      const reply = await new EntityChat(this.engine, this.deps, { ...this.req, branch: false }, this.options).reply(branch, id, this.requestMessages(r));
      return { ...reply, branchedFrom: original.id, turn: reply.turn === 'stored' ? 'branched' : reply.turn };
    }
    const history = r.conversation.slice(0, -1);
    const row = await entities.row(original.id, this.req.accountId);
    const shared = await this.sharedFromStart(original.id, history, original.transcript.messages);
    const create = await planBranch(this.deps, { original: row, history, sharedMessages: shared, id });
    return { ...(await turnReply(id, 'branched', entities.sendCreating(create, this.turnInput(r)))), branchedFrom: original.id };
  }

  /** The request's messages again, as the branch reads them. */
  private requestMessages(r: Read): ClientMessage[] {
    const system: ClientMessage[] = r.extras.system ? [{ role: 'system', content: r.extras.system }] : [];
    return [...system, ...r.conversation, ...r.round];
  }

  private async exists(id: string): Promise<boolean> {
    try {
      await this.engine.entities.get(id, this.req.accountId);
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
  }

  /** The transcript's last `n` messages (all of them when it has fewer). */
  private async tail(id: string, n: number, length: number): Promise<SeenMessage[]> {
    const from = Math.max(0, length - n);
    return this.messages(id, from, length - from);
  }

  /** How many of the history's first messages are the transcript's first ones (the branch keeps their summaries). */
  private async sharedFromStart(id: string, history: ClientMessage[], length: number): Promise<number> {
    const head = await this.messages(id, 0, Math.min(history.length, length));
    const differs = head.findIndex((t, i) => t.role !== history[i].role || normalize(t.content) !== normalize(history[i].content));
    return differs === -1 ? head.length : differs;
  }

  /** `n` transcript messages after seq `after`, in pages. */
  private async messages(id: string, after: number, n: number): Promise<SeenMessage[]> {
    const out: SeenMessage[] = [];
    while (out.length < n) {
      const page = await this.engine.entities.messages(id, { after: after + out.length, limit: Math.min(500, n - out.length) }, this.req.accountId);
      out.push(...page.data.map((m) => ({ seq: m.seq, role: m.role, content: m.content })));
      if (!page.has_more) break;
    }
    return out;
  }
}

/** The request's system text joined to the first system message (the instructions), or first of all. */
function withSystem(messages: ChatMessage[], system: string | undefined): ChatMessage[] {
  if (!system) return messages.slice();
  const [first, ...rest] = messages;
  if (first?.role === 'system') return [{ role: 'system', content: `${first.content}\n\n${system}` }, ...rest];
  return [{ role: 'system', content: system }, ...messages];
}

/** Removes the window's last turn (its reply, then the message `content` it answered), when the window still holds it. */
function dropLastTurn(messages: ChatMessage[], content: string): void {
  const n = messages.length;
  const [user, reply] = [messages[n - 2], messages[n - 1]];
  if (reply?.role !== 'assistant' || user?.role !== 'user' || typeof user.content !== 'string') return;
  if (normalize(user.content) === normalize(content)) messages.splice(n - 2, 2);
}
