/**
 * Typed errors: each knows its HTTP status, CLI exit code and a stable `code`, so callers never
 * branch on transport or on a message's text (docs/design.md#errors-and-their-codes).
 */

import type { RateStatus } from './rate-limits.js';

export type ExitCode = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7;

export interface FieldError {
  field: string;
  message: string;
}

/** What went wrong, for a program: stable across releases, unlike the message, which is for a person. */
export const ERROR_CODES = [
  'internal',
  'bad_request',
  'payload_too_large',
  'unauthorized',
  'forbidden',
  'not_found',
  /** A 404 for a pinned memory block the entity does not have (the entity itself exists). */
  'no_memory_block',
  /** A 409 that clears by itself: another writer holds the entity, universe, key or database. */
  'busy',
  /** A 409 that stays: the entity's transcript reached its cap. */
  'read_only',
  /** A 409 that stays: the name or id is taken. */
  'already_exists',
  'payment_required',
  'rate_limited',
  'provider_error',
  'context_overflow',
  'config',
  'not_supported',
  'cancelled',
  'disk_full',
  'disk_io',
  'database_read_only',
  'permission_denied',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The response header in which `mgpt serve` names an error's code, beside the contracts' bodies. */
export const ERROR_CODE_HEADER = 'mgpt-error-code';

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && (ERROR_CODES as readonly string[]).includes(value);
}

export interface ErrorOptions {
  hint?: string;
  cause?: unknown;
  /** Overrides the class's default code (a ConflictError is `busy` unless it says otherwise). */
  code?: ErrorCode;
  /** The entity the error is about, for machine output (`entity_id` in an HTTP error body); the message names it as its user does. */
  entityId?: string;
}

export class MgptError extends Error {
  /** The code an instance carries when its constructor is given none. */
  static readonly defaultCode: ErrorCode = 'internal';
  readonly status: number = 500;
  readonly exitCode: ExitCode = 1;
  readonly code: ErrorCode;
  /** An optional next step shown to a person after the error line. */
  hint?: string;
  /** The entity the error is about (see ErrorOptions.entityId). */
  readonly entityId?: string;
  constructor(message: string, opts: ErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = opts.code ?? (new.target as typeof MgptError).defaultCode;
    this.hint = opts.hint;
    if (opts.entityId !== undefined) this.entityId = opts.entityId;
  }
}

export class BadRequestError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'bad_request';
  override readonly status = 400;
  override readonly exitCode = 2;
  readonly errors?: FieldError[];
  constructor(message: string, opts: ErrorOptions & { errors?: FieldError[] } = {}) {
    super(message, opts);
    this.errors = opts.errors;
  }
}

export class PayloadTooLargeError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'payload_too_large';
  override readonly status = 413;
  override readonly exitCode = 2;
}

export class AuthError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'unauthorized';
  override readonly status = 401;
  override readonly exitCode = 3;
}

export class ForbiddenError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'forbidden';
  override readonly status = 403;
  override readonly exitCode = 3;
}

export class NotFoundError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'not_found';
  override readonly status = 404;
  override readonly exitCode = 4;
}

export class ConflictError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'busy';
  override readonly status = 409;
  override readonly exitCode = 5;
}

/**
 * A 409 that clears by itself (code `busy`): the entity is answering another message, a crashed
 * writer's lease has not expired yet, or the database is locked. A read-only entity (`read_only`)
 * or a taken name (`already_exists`) stays so.
 */
export function isBusy(err: unknown): boolean {
  return err instanceof ConflictError && err.code === 'busy';
}

export interface BalanceDetails {
  balanceUsd: number;
  billedUsd: number;
  missingUsd: number;
}

export class PaymentRequiredError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'payment_required';
  override readonly status = 402;
  override readonly exitCode = 6;
  readonly details: BalanceDetails;
  /** The message states the balance, the cost and what is missing (mgpt's own do); else the CLI prints them. */
  readonly detailed: boolean;
  constructor(message: string, details: BalanceDetails, opts: ErrorOptions & { detailed?: boolean } = {}) {
    super(message, opts);
    this.details = details;
    this.detailed = opts.detailed ?? false;
  }
}

/**
 * A key over its requests or tokens per minute (an extension): refused before anything is read,
 * stored or billed. `retryAfterMs` is when the request would be admitted; `rate` what is left.
 */
export class RateLimitedError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'rate_limited';
  override readonly status = 429;
  override readonly exitCode = 7;
  constructor(
    message: string,
    readonly limit: 'requests' | 'tokens',
    readonly retryAfterMs: number,
    readonly rate: RateStatus,
    opts: ErrorOptions = {},
  ) {
    super(message, opts);
  }
}

/** What a failed provider call ran into: the label of `mgpt_provider_errors_total{class}`. */
export type ProviderFailure = 'timeout' | 'http_4xx' | 'http_5xx' | 'connection' | 'other';

/** The model provider (or an upstream server) failed. */
export class ProviderError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'provider_error';
  override readonly status: number = 502;
  override readonly exitCode = 7;
  readonly retryable: boolean;
  /** The HTTP status the provider (or the upstream server) answered, when it answered. */
  readonly upstreamStatus?: number;
  /** The provider's own error code or type (OpenAI's `error.code`), when it sent one. */
  readonly providerCode?: string;
  /** From the upstream status, else the transport error's code (`cause`), else as the thrower says. */
  readonly failure: ProviderFailure;
  constructor(
    message: string,
    opts: ErrorOptions & { retryable?: boolean; status?: number; upstreamStatus?: number; providerCode?: string; failure?: ProviderFailure } = {},
  ) {
    super(message, opts);
    this.retryable = opts.retryable ?? false;
    if (opts.status !== undefined) this.status = opts.status;
    this.upstreamStatus = opts.upstreamStatus;
    this.providerCode = opts.providerCode;
    this.failure = opts.failure ?? httpFailure(opts.upstreamStatus) ?? transportFailure(opts.cause) ?? 'other';
  }
}

function httpFailure(status: number | undefined): ProviderFailure | undefined {
  if (status === 408 || status === 504) return 'timeout';
  if (status !== undefined && status >= 400 && status < 600) return status < 500 ? 'http_4xx' : 'http_5xx';
  return undefined;
}

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ERR_BODY_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ESOCKETTIMEDOUT']);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

/** A transport error's failure, by its `code` (or its cause's): undefined when it has none we know. */
export function transportFailure(err: unknown): ProviderFailure | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = String((e as { code?: unknown }).code ?? '');
    if (TIMEOUT_CODES.has(code) || (e as { name?: unknown }).name === 'TimeoutError') return 'timeout';
    if (CONNECTION_CODES.has(code)) return 'connection';
  }
  return undefined;
}

/**
 * The prompt does not fit the model's context. Providers throw it when the model (or its server)
 * says so, with what the answer revealed; the engine learns the context from it and retries once.
 * When it reaches a caller, the turn could not be made to fit (a message larger than the model).
 */
export class ContextOverflowError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'context_overflow';
  override readonly status = 400;
  override readonly exitCode = 2;
  /** The model's context in its own tokens, when the answer named it. */
  readonly contextTokens?: number;
  /** The prompt's size in the model's own tokens, when the answer named it. */
  readonly promptTokens?: number;
  /** The server ran out of a context it shares between parallel requests (mid-stream, not at the start). */
  readonly shared: boolean;
  constructor(message: string, opts: ErrorOptions & { contextTokens?: number; promptTokens?: number; shared?: boolean } = {}) {
    super(message, opts);
    this.contextTokens = opts.contextTokens;
    this.promptTokens = opts.promptTokens;
    this.shared = opts.shared ?? false;
  }
}

/**
 * The settings (flags, environment, config file, a model route) are wrong: the person running the
 * command must fix them, so the CLI exits 2 like any usage error; over HTTP it is the server's
 * own configuration, so a 500, not the client's 400.
 */
export class ConfigError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'config';
  override readonly status = 500;
  override readonly exitCode = 2;
}

/** The backend in use cannot do this (the remote wire contract has no such operation). */
export class NotSupportedError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'not_supported';
  override readonly status = 400;
  override readonly exitCode = 2;
}

/** The operation was cancelled by the caller (Ctrl-C, a dropped client). */
export class CancelledError extends MgptError {
  static override readonly defaultCode: ErrorCode = 'cancelled';
  override readonly status = 499;
  override readonly exitCode = 1;
  constructor(message = 'cancelled') {
    super(message);
  }
}

/** What a cancelled entity turn says, on either backend: the server drops a turn whose client left. */
export const TURN_CANCELLED = 'cancelled: nothing of this turn was stored';
/** A steering action (mgpt rotate) its caller cancelled. */
export const ROTATION_CANCELLED = 'cancelled: nothing of this rotation was stored';

/**
 * A typed error thrown by another bundle of the CLI (`mgpt serve`'s server bundle and the chat
 * screen keep their own copy of these classes, so `instanceof` fails on them) as one of ours: the
 * same message, hint, status and exit code. Anything else is returned unchanged.
 */
export function fromOtherBundle(err: unknown): unknown {
  if (err instanceof MgptError || !(err instanceof Error)) return err;
  const { exitCode, status, hint, code } = err as Partial<MgptError>;
  if (typeof exitCode !== 'number' || typeof status !== 'number') return err;
  const copy = new (class extends MgptError {
    override readonly status = status!;
    override readonly exitCode = exitCode!;
  })(err.message, { hint, cause: err, code: isErrorCode(code) ? code : undefined });
  copy.name = err.name;
  return copy;
}

/** Exit code for any thrown value: typed errors know theirs, everything else is 1. */
export function exitCodeOf(err: unknown): ExitCode {
  return err instanceof MgptError ? err.exitCode : 1;
}

export function isAbortError(err: unknown): boolean {
  return (
    err instanceof CancelledError ||
    (typeof err === 'object' && err !== null && (err as { name?: string }).name === 'AbortError')
  );
}

/**
 * The one translation of file-system and SQLite failures (by their `code`) into clear errors, so a
 * full disk or a read-only file says so instead of surfacing as `SQLITE_FULL` or a stack trace.
 * `path` names the file when the caller knows it. Anything else is returned unchanged.
 */
export function fromSystemError(err: unknown, path?: string): unknown {
  if (err instanceof MgptError || typeof err !== 'object' || err === null) return err;
  const code = String((err as { code?: unknown }).code ?? '');
  const file = path ?? (err as { path?: string }).path;
  const subject = file ? `cannot write ${file}: ` : '';
  const opts = { cause: err };
  const busy = databaseBusy(err);
  if (busy) return busy;
  if (code === 'ENOSPC' || code === 'SQLITE_FULL' || code === 'EDQUOT') {
    return new MgptError(`${subject}the disk is full`, { ...opts, code: 'disk_full', hint: 'free some space (or use a file on another disk) and retry' });
  }
  if (code.startsWith('SQLITE_IOERR')) {
    // SQLite's I/O errors hide the errno; on a full disk it cannot even grow its shared-memory file.
    return new MgptError(`a disk I/O error on the database (${code})`, { ...opts, code: 'disk_io', hint: 'check that its disk is not full and is working' });
  }
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') {
    return new MgptError(`${subject}the database is read-only`, {
      ...opts,
      code: 'database_read_only',
      hint: 'reading commands still work; to write, make the database file and its directory writable (or pass another --db)',
    });
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new MgptError(`${subject}permission denied`, { ...opts, code: 'permission_denied', hint: 'check the permissions of the file and its directory' });
  }
  if (code === 'ENOENT' && file) {
    return new BadRequestError(`${subject}its directory does not exist`, { hint: 'create the directory first, or pick another path' });
  }
  if (code === 'ENOTDIR' || code === 'EISDIR') {
    return new BadRequestError(`${subject}${code === 'EISDIR' ? 'it is a directory' : 'a part of the path is not a directory'}`, {
      hint: 'pick another path',
    });
  }
  return err;
}

/**
 * Another writer held the database past the wait, by the driver's error code, as a 409 that clears
 * by itself (code `busy`): SQLite's SQLITE_BUSY (and its extended codes), when another process held
 * the file's write lock for longer than the connection's busy_timeout; PostgreSQL's serialization
 * failure (40001), deadlock (40P01) or lock not available (55P03). Another writer is exactly what a
 * conflict is, so the loser of a contended turn exits 5 like any other, never as a fault (1) or,
 * behind `mgpt serve`, a server error (7). Undefined for anything else.
 */
export function databaseBusy(err: unknown): ConflictError | undefined {
  const code = typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : '';
  if (code.startsWith('SQLITE_BUSY')) {
    return new ConflictError('the database is busy: another process held its write lock for longer than mgpt waits', {
      cause: err,
      hint: 'retry in a moment; if it stays busy, look for a process keeping a transaction open on the database file',
    });
  }
  if (PG_BUSY.has(code)) {
    return new ConflictError(`the database is busy: another transaction held what this one needed (SQLSTATE ${code})`, {
      cause: err,
      hint: 'retry in a moment: nothing of this request was stored',
    });
  }
  return undefined;
}

/** PostgreSQL's SQLSTATEs for a transaction that lost to another one: retrying it is safe. */
const PG_BUSY = new Set(['40001', '40P01', '55P03']);
