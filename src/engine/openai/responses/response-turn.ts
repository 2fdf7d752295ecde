import { ContextOverflowError } from '../../../core/errors.js';
import { prepend, primed } from '../../../core/primed.js';
import type { ChunkEvent } from '../../../core/wire/completion-stream.js';
import type { Entity, TurnEvent } from '../../../core/wire/entity-types.js';
import type { ChatMessage } from '../../../providers/spec.js';
import type { ResponseRow } from '../../../store/types.js';
import { completeStateless } from '../../generation/complete.js';
import { branchIdFor, planBranch } from '../chat-branch.js';
import type { ClientMessage } from '../chat-facade.js';
import type { FacadeDeps, FacadeServices } from '../chat-types.js';
import { fitStateless, learnOverflow } from '../stateless-fit.js';
import { type PendingRound, type TurnPrompt, answeredRound, chatMessagesOf, systemOf, turnPrompt, withSystem } from './response-prompt.js';
import type { InputItem, ResponseRequest } from './response-request.js';
import type { ResponseTarget } from './response-target.js';
import type { ResponsesCall } from './responses-types.js';

type DoneEvent = Extract<TurnEvent | ChunkEvent, { type: 'done' }>;

/** A response's model call, started: what the Mgpt- headers say, and its events (primed: a refusal is thrown before them). */
export interface StartedTurn {
  turn: 'stored' | 'branched' | 'stateless' | 'tool_calls';
  /** The entity the turn went to (a new one when it branched). */
  entityId?: string;
  branchedFrom?: string;
  recalled?: number;
  dropped?: number;
  events: AsyncGenerator<TurnEvent | ChunkEvent>;
  /** Told once the finished turn's row is stored (a conversation's held message is then in the transcript). */
  stored?: () => Promise<void>;
  /** The row that names the finished turn, or null when nothing is stored. */
  rowFor(done: DoneEvent, base: Pick<ResponseRow, 'id' | 'accountId' | 'body' | 'input' | 'createdAt' | 'idempotencyKey'>): ResponseRow | null;
}

type Entities = FacadeServices['entities'];

/**
 * One response on an entity or a platform model: a stored turn (continuing the entity, or a branch
 * when the previous response is older than its latest), or, with `store: false` or a platform
 * model, a stateless answer fitted to the model.
 */
export class ResponseTurn {
  constructor(
    private readonly entities: Entities,
    private readonly deps: FacadeDeps,
    private readonly call: ResponsesCall,
    private readonly req: ResponseRequest,
  ) {}

  async start(target: ResponseTarget): Promise<StartedTurn> {
    if (target.kind === 'platform') return this.stateless(target.model, [...withSystem([], systemOf(this.req)), ...chatMessagesOf(this.req.input)], undefined);
    if (!this.req.store) return this.stateless(target.entity.model, await this.unstoredContext(target), target.entity.id);
    const { entity } = target;
    const prev = target.prev ?? (target.conversation ? await this.openRound(entity) : undefined);
    const pending = prev?.pending ? (JSON.parse(prev.pending) as PendingRound) : undefined;
    const held = target.conversation && !pending ? await heldMessage(this.deps, entity.id, this.call.accountId) : undefined;
    const prompt = pending ? answeredRound(this.req, pending) : turnPrompt(held ? { ...this.req, input: withHeld(held.text, this.req.input) } : this.req);
    const point = !prev ? entity.transcript.messages : prev.replySeq ?? prev.afterSeq;
    if (prev && entity.transcript.messages > point) return this.branched(target.entity, target.rootId, prompt, point);
    const started = await this.primedTurn(this.entities.send(entity.id, this.turnInput(prompt), this.call.accountId));
    return { ...started, entityId: entity.id, stored: held?.clear, rowFor: (d, base) => this.row(d, base, { entityId: entity.id, rootId: target.rootId, point, prompt }) };
  }

  /** A conversation's open tool round: its newest response called functions and nothing was stored since. */
  private async openRound(entity: Entity): Promise<ResponseRow | undefined> {
    if (!this.req.input.some((i) => i.type === 'function_call_output')) return undefined;
    const latest = await this.deps.store.responses.latest(entity.id);
    return latest?.pending && latest.afterSeq === entity.transcript.messages ? latest : undefined;
  }

  /** A turn on a new entity: the original's transcript up to `point`, then this turn (both stored by the turn's commit, or neither). */
  private async branched(original: Entity, rootId: string, prompt: TurnPrompt, point: number): Promise<StartedTurn> {
    const history = (await this.transcript(original.id, point)).map((m): ClientMessage => ({ role: m.role as 'user' | 'assistant', content: m.content as string }));
    const id = branchIdFor(original.id, this.call.idempotencyKey ?? `response:${this.call.responseId}`);
    const row = await this.entities.row(original.id, this.call.accountId);
    const create = await planBranch(this.deps, { original: row, history, sharedMessages: point, id });
    const started = await this.primedTurn(this.entities.sendCreating(create, this.turnInput(prompt)));
    const turn = started.turn === 'stored' ? 'branched' : started.turn;
    // A reply that calls tools creates no branch: its open round stays on the original, at the same point.
    const rowFor: StartedTurn['rowFor'] = (d, base) =>
      this.row(d, base, hasCalls(d) ? { entityId: original.id, rootId, point, prompt } : { entityId: id, rootId, point, prompt });
    return { ...started, turn, entityId: id, branchedFrom: original.id, rowFor };
  }

  private async primedTurn(events: AsyncGenerator<TurnEvent>): Promise<Omit<StartedTurn, 'rowFor'>> {
    const first = await events.next();
    const start = !first.done && first.value.type === 'start' ? first.value : undefined;
    return {
      turn: start?.stores === false ? 'tool_calls' : 'stored',
      ...(start?.recalledMessages ? { recalled: start.recalledMessages } : {}),
      events: prepend(first, events),
    };
  }

  private turnInput(p: TurnPrompt) {
    const { idempotencyKey, signal, allowance, keyId } = this.call;
    const { sampling, tools, toolChoice, streamed } = this.req.options;
    const extras = { system: p.system, sampling, tools, toolChoice, round: p.round, facade: true, allowance, keyId };
    // A streamed reply the client stops is kept as far as it went, as the chat facade keeps it.
    if (!streamed) return { content: p.content, idempotencyKey, signal, extras: { ...extras, buffered: true } };
    return { content: p.content, idempotencyKey, extras: { ...extras, stop: signal } };
  }

  /** What names the finished turn: its reply's seq, or the round it left open for the client's outputs. */
  private row(d: DoneEvent, base: Parameters<StartedTurn['rowFor']>[1], at: { entityId: string; rootId: string; point: number; prompt: TurnPrompt }): ResponseRow | null {
    if (!this.req.store) return null;
    const common = { ...base, entityId: at.entityId, rootEntityId: at.rootId };
    if (hasCalls(d)) {
      const message = d.completion.choices[0].message;
      const calls = message.tool_calls ?? [];
      const open: PendingRound = { content: at.prompt.content, round: [...at.prompt.round, { role: 'assistant', content: message.content, tool_calls: calls }], calls: calls.map((c) => c.id) };
      return { ...common, afterSeq: at.point, replySeq: null, pending: JSON.stringify(open) };
    }
    const seq = 'seq' in d && d.seq !== undefined ? d.seq : at.point + 2;
    return { ...common, afterSeq: seq - 2, replySeq: seq, pending: null };
  }

  /** `store: false` on an entity: what its next turn would see (or its transcript up to an older response), then the request's items. */
  private async unstoredContext(target: Extract<ResponseTarget, { kind: 'entity' }>): Promise<ChatMessage[]> {
    const { entity, prev } = target;
    const system = systemOf(this.req);
    const items = chatMessagesOf(this.req.input);
    if (!prev && !target.conversation) return [...withSystem(instructionsOf(entity), system), ...items];
    const point = prev ? prev.replySeq ?? prev.afterSeq : entity.transcript.messages;
    const base = point === entity.transcript.messages
      ? await this.entities.context(entity.id, this.call.accountId)
      : [...instructionsOf(entity), ...(await this.transcript(entity.id, point))];
    const pending = prev?.pending ? (JSON.parse(prev.pending) as PendingRound) : undefined;
    const open: ChatMessage[] = pending ? [{ role: 'user', content: pending.content }, ...pending.round] : [];
    return [...withSystem(base, system), ...open, ...items];
  }

  /**
   * A reply nothing remembers, fitted to the model: with truncation "auto" the oldest messages that
   * do not fit are left out; with "disabled" (OpenAI's default) that is a 400 context_length_exceeded.
   */
  private async stateless(model: string, messages: ChatMessage[], entityId: string | undefined): Promise<StartedTurn> {
    let fitted = await fitStateless(this.deps, model, messages, []);
    this.checkFits(fitted.dropped);
    try {
      return await this.answer(model, fitted.messages, fitted.dropped, entityId);
    } catch (err) {
      if (!(err instanceof ContextOverflowError)) throw err;
      await learnOverflow(this.deps, model, err, fitted.messages);
      const again = await fitStateless(this.deps, model, messages, []);
      if (again.dropped <= fitted.dropped) throw err;
      this.checkFits(again.dropped);
      fitted = again;
      return this.answer(model, fitted.messages, fitted.dropped, entityId);
    }
  }

  private checkFits(dropped: number): void {
    if (dropped === 0 || this.req.truncation === 'auto') return;
    throw new ContextOverflowError(`the input does not fit the model's context (${dropped} of the oldest messages would have to be left out)`, {
      hint: 'send truncation: "auto" to leave them out, or store the conversation on an entity, whose rotation keeps it within the window',
    });
  }

  private async answer(model: string, messages: ChatMessage[], dropped: number, entityId: string | undefined): Promise<StartedTurn> {
    const { sampling, tools, toolChoice, streamed } = this.req.options;
    const events = completeStateless(this.deps, {
      model, shownModel: this.req.model, messages, sampling, tools, toolChoice, mode: entityId ? 'unstored' : 'stateless', entityId,
      accountId: this.call.accountId, userId: this.call.userId, key: this.call.idempotencyKey, signal: this.call.signal, streamed, allowance: this.call.allowance, keyId: this.call.keyId,
    });
    return { turn: 'stateless', ...(entityId ? { entityId } : {}), ...(dropped ? { dropped } : {}), events: await primed(events), rowFor: () => null };
  }

  /** The transcript's first `n` messages, in pages. */
  private async transcript(id: string, n: number): Promise<ChatMessage[]> {
    const out: ChatMessage[] = [];
    while (out.length < n) {
      const page = await this.entities.messages(id, { after: out.length, limit: Math.min(500, n - out.length) }, this.call.accountId);
      out.push(...page.data.map((m): ChatMessage => ({ role: m.role, content: m.content })));
      if (!page.has_more) break;
    }
    return out;
  }
}

/** A conversation's held user message (added as an item, not answered yet), and how to clear it once its turn is stored. */
async function heldMessage(deps: FacadeDeps, entityId: string, accountId: string): Promise<{ text: string; clear: () => Promise<void> } | undefined> {
  const row = await deps.store.responses.conversation(accountId, entityId);
  const held = row ? (JSON.parse(row.held) as Array<{ role: string; text: string }>) : [];
  if (!row || held.length === 0) return undefined;
  return { text: held.map((h) => h.text).join('\n\n'), clear: () => deps.store.responses.putConversation({ ...row, held: '[]' }) };
}

/** The input with a held user message before its own (joined to it, or as the message when the input has none). */
function withHeld(text: string, input: InputItem[]): InputItem[] {
  const at = input.findIndex((i) => i.type === 'message' && i.role === 'user');
  if (at === -1) return [{ type: 'message', role: 'user', text }, ...input];
  const own = input[at] as Extract<InputItem, { type: 'message' }>;
  return [...input.slice(0, at), { ...own, text: `${text}\n\n${own.text}` }, ...input.slice(at + 1)];
}

function hasCalls(d: DoneEvent): boolean {
  return (d.completion.choices[0]?.message.tool_calls?.length ?? 0) > 0;
}

function instructionsOf(entity: Entity): ChatMessage[] {
  return entity.instructions ? [{ role: 'system', content: entity.instructions }] : [];
}
