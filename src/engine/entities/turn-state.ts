import { entityLabel } from '../../core/ref.js';
import { CancelledError, ConflictError, ContextOverflowError, NotFoundError, TURN_CANCELLED } from '../../core/errors.js';
import type { TokenAllowance } from '../../core/rate-limits.js';
import type { ChatMessage, Sampling, ToolChoice, ToolDefinition } from '../../providers/spec.js';
import type { EntityImport, EntityRow } from '../../store/types.js';
import type { RecallState } from './recall.js';
import type { WindowTurn } from './window/turn-window.js';

/** What a caller asks of one entity turn (checked by EntityService before it starts). */
export interface TurnInput {
  content: string;
  key?: string;
  contentSha256: string;
  signal?: AbortSignal;
  extras?: TurnExtras;
  /** The date the caller gave the message (checked, UTC); its reply takes it too. Unset: now. */
  writtenAt?: string;
}

/**
 * What one request adds to a turn and never stores (the OpenAI facade's clients): a system text
 * applied after the entity's instructions, sampling, tools, and the tool round the model is
 * answering (its calls and their results, after the user message). A reply that calls tools is
 * returned, not stored: the turn is stored when the model gives its final reply.
 */
export interface TurnExtras {
  system?: string;
  sampling?: Sampling;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  round?: ChatMessage[];
  /**
   * A client that stops a stream keeps what it was shown (the facade's chat clients), so the
   * entity keeps it too: once text has been streamed, this signal ends the reply where it is and
   * the turn is stored with it. Before any text it cancels, as `signal` does.
   */
  stop?: AbortSignal;
  /** The caller waits for the whole reply (`stream: false`): the provider may answer in one piece. */
  buffered?: boolean;
  /** The turn came through the OpenAI facade (it is counted as such). */
  facade?: boolean;
  /** The request's share of its key's tokens per minute: the turn reserves its message and its reply's bound before the model is called. */
  allowance?: TokenAllowance;
  /** The API key the request came with, recorded on its charge (none: the local backend's own use). */
  keyId?: string;
  /** The model is offered `remember`, which sets a pinned memory block (remember.ts). */
  memoryTool?: boolean;
}

/** Which entity a turn is for: the account's, or a 404. */
export interface EntityRef {
  id: string;
  accountId: string;
  /**
   * An entity not stored yet (a branch): the turn's commit writes it together with the turn, so
   * a refused or failed turn leaves nothing. Once an entity with its id is stored (a retry that
   * finished first), the stored one is used.
   */
  create?: EntityImport;
}

/** The entity as the turn sees it, and the write that creates it when it is not stored yet. */
export interface Current {
  entity: EntityRow;
  create?: EntityImport;
}

/** What the steps of one turn share. */
export interface TurnState extends WindowTurn {
  /** The entity's own write, when this turn creates it (a branch). */
  create?: EntityImport;
  replyId: string;
  created: number;
  /** The caller has seen the start of the reply: from then on nothing is retried. */
  started: boolean;
  extras: TurnExtras;
  /** The rounds of recall this attempt took (an entity with recall on). */
  recall: RecallState;
  /** When the turn started (the clock's ms), for its log record. */
  t0: number;
  /** The user id of the entity's account: whose log record the turn writes. */
  ownerUserId: string;
  /** The reply so far, when a shared context cut it and it is being continued. */
  prefill?: string;
  /**
   * The shared context ran out on an earlier attempt: the next runs with nothing else on the
   * route, so the server (which clears its idle slots when a task starts) has the whole context.
   */
  alone?: boolean;
  /** When the caller saw the turn start (the clock's ms), for the first-token metric. */
  firstTokenAt?: number;
  /** The prompt the last request sent, up to the user message (the turn's window record). */
  prompt?: ChatMessage[];
}

/** Whether the client stopped the stream (see TurnExtras.stop). */
export function stopped(turn: TurnState): boolean {
  return turn.extras.stop?.aborted === true;
}

/** The caller's signal that ended the turn, if one did: a cancel, or a stop before any text. */
export function callerSignal(input: TurnInput): AbortSignal | undefined {
  return input.extras?.stop?.aborted ? input.extras.stop : input.signal;
}

export function cancelled(signal?: AbortSignal): CancelledError {
  return new CancelledError(
    signal?.aborted
      ? TURN_CANCELLED
      : 'the turn lost its lease (the process stalled longer than the lease TTL); nothing was stored',
  );
}

export function entityNotFound(id: string): NotFoundError {
  return new NotFoundError(`no entity ${id} on this account`, { hint: 'list entities with: mgpt entities list' });
}

/** Named as the turn found it before the lease (the user who typed its name was told that name). */
export function deleted(entity: Pick<EntityRow, 'id' | 'name'>): NotFoundError {
  return new NotFoundError(`entity ${entityLabel(entity)} was deleted while this turn ran; nothing was stored`, {
    entityId: entity.id,
    hint: 'list entities with: mgpt entities list',
  });
}

export function readOnly(entity: EntityRow): ConflictError {
  return new ConflictError(
    `entity ${entityLabel(entity)} is read-only: its transcript reached the cap of ${entity.capTokens.toLocaleString('en-US')} tokens`,
    { hint: 'export it (mgpt export) and start a new entity', code: 'read_only', entityId: entity.id },
  );
}

/** The refusal of a write while another turn holds the entity's lease. */
export function answering(entity: EntityRow, what = 'a message'): ConflictError {
  return new ConflictError(`entity ${entityLabel(entity)} is answering ${what}`, { hint: 'retry after that reply finishes', entityId: entity.id });
}

export function leaseTakenOver(entity: EntityRow): ConflictError {
  return new ConflictError(`entity ${entityLabel(entity)}: another turn took over the lease before this one could be stored`, {
    hint: 'retry; with an idempotency key the retry is safe', entityId: entity.id,
  });
}

/** A refusal the retry could not cure: said plainly, with what to do. */
export function tooLarge(err: unknown, turn: TurnState): unknown {
  if (!(err instanceof ContextOverflowError) || turn.started) return err;
  if (err.shared) return new ContextOverflowError(`the server's shared context ran out on every attempt: ${err.message}`, { shared: true, hint: err.hint });
  return new ContextOverflowError(`the prompt does not fit the model's context even after folding the window: ${err.message}`, {
    contextTokens: err.contextTokens,
    promptTokens: err.promptTokens,
    hint: err.hint ?? `set the context explicitly: mgpt config set models.${turn.entity.model}.contextSize N`,
  });
}
