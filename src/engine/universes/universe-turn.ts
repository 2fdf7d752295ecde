import { BadRequestError, ConflictError } from '../../core/errors.js';
import { splitsToolGroup } from '../../core/universe-window.js';
import type { GenerationResponse, RespondInput } from '../../core/wire/universe-types.js';
import type { TokenAllowance } from '../../core/rate-limits.js';
import type { LogRow, RequestRow, UniverseMessageRow, UniverseRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { type HeldLease, type LeaseRequest, universeSubject } from '../support/lease.js';
import { toRuntime, type UniverseService } from './universes.js';

export type Mode = 'stored' | 'inline' | 'standalone';

export interface Loaded {
  mode: Mode;
  universe?: UniverseRow;
  prompt: { text: string; responseFormat?: Record<string, unknown>; additionalInstructions?: string } | null;
  messages: UniverseMessageRow[];
  source: 'cache' | 'database' | 'none';
  ageMs: number;
}

export interface HeldContext {
  userId: string;
  signal?: AbortSignal;
  allowance?: TokenAllowance;
  t0: number;
  stages: GenerationResponse['diagnostics']['serverStages'];
  requestRow: RequestRow | undefined;
  lease?: HeldLease;
  /** When the reply's first text arrived (the clock's ms), for the first-token metric. */
  firstTokenAt?: number;
}

/** A universe turn in progress: what it read, what it has stored so far, and how it stores more. */
export class Turn {
  /** The conversation as this turn sees it (stored rows plus what it appended). */
  messages: UniverseMessageRow[];
  /** A statePointer's cut, stored with the turn's first write. */
  truncateTo: number | undefined;
  /** The user message this turn answers, once stored. */
  userSeq: number | null = null;

  constructor(
    readonly deps: EngineDeps,
    readonly input: RespondInput,
    readonly loaded: Loaded,
    readonly ctx: HeldContext,
  ) {
    this.messages = loaded.messages;
  }

  get universeId(): string | null {
    return this.loaded.universe?.id ?? null;
  }

  /** Stored mode writes; inline and standalone turns keep nothing but their log. */
  get stored(): boolean {
    return this.loaded.mode === 'stored' && this.ctx.lease !== undefined && this.universeId !== null;
  }

  newRow(r: Omit<UniverseMessageRow, 'seq' | 'createdAt'>, offset = 0): UniverseMessageRow {
    return { ...r, seq: this.messages.length + 1 + offset, createdAt: this.deps.clock.iso() };
  }

  /** The requestId record with this outcome, when the request has an id and the turn is stored. */
  request(status: RequestRow['status'], response: GenerationResponse | null = null): RequestRow | undefined {
    if (!this.input.requestId || !this.stored) return undefined;
    const userSeq = status === 'done' ? null : this.userSeq;
    return { userId: this.ctx.userId, requestId: this.input.requestId, universeId: this.universeId, status, userSeq, response: response && JSON.stringify(response) };
  }

  /**
   * Stores rows (and a pending truncation) in one unit of work under the lease; `end` makes it the
   * turn's last write, with its log record and request outcome, and frees the lease.
   */
  async write(rows: UniverseMessageRow[], extra: { request?: RequestRow; end?: { log: LogRow } } = {}): Promise<void> {
    this.messages = [...this.messages, ...rows];
    if (!this.stored) {
      if (extra.end) await this.deps.store.logs.insert(extra.end.log);
      return;
    }
    const { deps, universeId, truncateTo } = this;
    const last = extra.end !== undefined;
    if (rows.length === 0 && truncateTo === undefined && !last && !extra.request) return;
    const write = {
      universeId: universeId!, truncateTo, append: rows, touch: { messages: this.messages.length, updatedAt: deps.clock.iso() },
      release: last, log: extra.end?.log, request: extra.request,
    };
    await this.ctx.lease!.write((claim) => deps.store.universes.write({ ...write, lease: claim }), () => leaseLost(universeId!), last);
    this.truncateTo = undefined;
    if (last) deps.universeCache.set(universeId!, `${this.messages.length}:${write.touch.updatedAt}`, this.messages);
  }
}

/** Loads the conversation and applies a statePointer: nothing is stored yet. */
export async function openTurn(deps: EngineDeps, universes: UniverseService, input: RespondInput, ctx: HeldContext): Promise<Turn> {
  let tStage = deps.clock.now();
  const loaded = await load(deps, universes, input, ctx.userId);
  ctx.stages.load = deps.clock.now() - tStage;
  checkStructured(input, loaded);
  const turn = new Turn(deps, input, loaded, ctx);
  // A retry after a failure or a crash whose user message was stored: continue from it, store nothing twice.
  const r = ctx.requestRow;
  const resumed =
    turn.stored && (r?.status === 'failed' || r?.status === 'pending') && r.universeId === turn.universeId &&
    r.userSeq !== null && r.userSeq === turn.messages.length && turn.messages[r.userSeq - 1]?.role === 'user' &&
    turn.messages[r.userSeq - 1]?.content === input.userInput;
  if (resumed) turn.userSeq = r!.userSeq;
  tStage = deps.clock.now();
  if (input.statePointer !== undefined && !resumed) applyStatePointer(turn, input.statePointer);
  ctx.stages.truncate = deps.clock.now() - tStage;
  return turn;
}

export function applyStatePointer(turn: Turn, p: number): void {
  const messages = turn.messages;
  if (p > messages.length || splitsToolGroup(messages.map(toRuntime), p)) {
    const why = p > messages.length ? `is beyond the ${messages.length} stored messages` : 'falls inside a tool-call group';
    throw new BadRequestError(`statePointer ${p} ${why}`, { errors: [{ field: 'statePointer', message: why }] });
  }
  if (p === messages.length) return;
  // Dropped from the live transcript (stored with the turn's first write, after every check);
  // what was said stays in the generation logs.
  if (turn.stored) turn.truncateTo = p;
  turn.messages = messages.slice(0, p);
}

export async function load(deps: EngineDeps, universes: UniverseService, input: RespondInput, userId: string): Promise<Loaded> {
  if (input.universe !== undefined) {
    const universe = await universes.owned(input.universe, userId);
    const cached = deps.universeCache.get(universe.id, `${universe.messages}:${universe.updatedAt}`);
    const messages = cached?.value ?? (await deps.store.universes.messages(universe.id));
    return {
      mode: 'stored',
      universe,
      prompt: {
        text: universe.promptText,
        responseFormat: universe.responseFormat ? JSON.parse(universe.responseFormat) : undefined,
        additionalInstructions: universe.additionalInstructions ?? undefined,
      },
      messages,
      source: cached ? 'cache' : 'database',
      ageMs: cached ? deps.clock.now() - cached.storedAt : 0,
    };
  }
  if (input.universeDoc !== undefined) {
    const doc = input.universeDoc;
    const p = doc.prompt;
    const prompt = p?.text !== undefined ? { text: p.text } : p?.storedPrompt !== undefined ? await deps.prompts.get(p.storedPrompt) : null;
    const now = deps.clock.iso();
    const messages: UniverseMessageRow[] = doc.runtime.conversation.map((m, i) => ({
      seq: i + 1,
      role: m.role,
      content: m.content,
      toolCalls: m.role === 'assistant' && m.tool_calls ? JSON.stringify(m.tool_calls) : null,
      toolCallId: m.role === 'tool' ? m.tool_call_id : null,
      toolName: m.role === 'tool' ? (m.name ?? null) : null,
      toolOk: null,
      createdAt: now,
    }));
    return { mode: 'inline', prompt, messages, source: 'none', ageMs: 0 };
  }
  return { mode: 'standalone', prompt: null, messages: [], source: 'none', ageMs: 0 };
}

/** useStructuredOutput needs an output contract in the prompt snapshot. */
export function checkStructured(input: RespondInput, loaded: Loaded): void {
  if (input.responseFormat !== undefined || !input.useStructuredOutput || loaded.prompt?.responseFormat) return;
  throw new BadRequestError('useStructuredOutput: this prompt has no stored output contract (responseFormat)', {
    errors: [{ field: 'useStructuredOutput', message: 'no responseFormat in the prompt snapshot' }],
  });
}

export function universeLease(deps: EngineDeps, universeId: string): LeaseRequest {
  return {
    subject: universeSubject(universeId),
    refused: () => {
      deps.events.leaseConflict();
      return new ConflictError(`universe ${universeId} is answering another request`, { hint: 'retry after that response finishes' });
    },
  };
}

export function leaseLost(universeId: string): ConflictError {
  return new ConflictError(`universe ${universeId}: another request took over the universe before this turn was stored`, {
    hint: 'retry; with a requestId the retry is safe',
  });
}
