/** Typed errors: each knows its HTTP status and CLI exit code, so callers never branch on transport. */

import type { RateStatus } from './rate-limits.js';

export type ExitCode = 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7;

export interface FieldError {
  field: string;
  message: string;
}

export class MgptError extends Error {
  readonly status: number = 500;
  readonly exitCode: ExitCode = 1;
  /** An optional next step shown to a person after the error line. */
  hint?: string;
  constructor(message: string, opts: { hint?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.hint = opts.hint;
  }
}

export class BadRequestError extends MgptError {
  override readonly status = 400;
  override readonly exitCode = 2;
  readonly errors?: FieldError[];
  constructor(message: string, opts: { hint?: string; errors?: FieldError[] } = {}) {
    super(message, opts);
    this.errors = opts.errors;
  }
}

export class PayloadTooLargeError extends MgptError {
  override readonly status = 413;
  override readonly exitCode = 2;
}

export class AuthError extends MgptError {
  override readonly status = 401;
  override readonly exitCode = 3;
}

export class ForbiddenError extends MgptError {
  override readonly status = 403;
  override readonly exitCode = 3;
}

export class NotFoundError extends MgptError {
  override readonly status = 404;
  override readonly exitCode = 4;
}

export class ConflictError extends MgptError {
  override readonly status = 409;
  override readonly exitCode = 5;
}

/**
 * A 409 that clears by itself: the entity is answering another message, or a crashed writer's
 * lease has not expired yet. Read-only entities (the transcript cap) are the other 409 and stay so.
 */
export function isBusy(err: unknown): boolean {
  return err instanceof ConflictError && !/read-only/.test(err.message);
}

export interface BalanceDetails {
  balanceUsd: number;
  billedUsd: number;
  missingUsd: number;
}

export class PaymentRequiredError extends MgptError {
  override readonly status = 402;
  override readonly exitCode = 6;
  readonly details: BalanceDetails;
  constructor(message: string, details: BalanceDetails, opts: { hint?: string } = {}) {
    super(message, opts);
    this.details = details;
  }
}

/**
 * A key over its requests or tokens per minute (an extension): refused before anything is read,
 * stored or billed. `retryAfterMs` is when the request would be admitted; `rate` what is left.
 */
export class RateLimitedError extends MgptError {
  override readonly status = 429;
  override readonly exitCode = 7;
  constructor(
    message: string,
    readonly limit: 'requests' | 'tokens',
    readonly retryAfterMs: number,
    readonly rate: RateStatus,
    opts: { hint?: string } = {},
  ) {
    super(message, opts);
  }
}

/** The model provider (or an upstream server) failed. */
export class ProviderError extends MgptError {
  override readonly status: number = 502;
  override readonly exitCode = 7;
  readonly retryable: boolean;
  constructor(message: string, opts: { retryable?: boolean; hint?: string; cause?: unknown; status?: number } = {}) {
    super(message, opts);
    this.retryable = opts.retryable ?? false;
    if (opts.status !== undefined) this.status = opts.status;
  }
}

/**
 * The prompt does not fit the model's context. Providers throw it when the model (or its server)
 * says so, with what the answer revealed; the engine learns the context from it and retries once.
 * When it reaches a caller, the turn could not be made to fit (a message larger than the model).
 */
export class ContextOverflowError extends MgptError {
  override readonly status = 400;
  override readonly exitCode = 2;
  /** The model's context in its own tokens, when the answer named it. */
  readonly contextTokens?: number;
  /** The prompt's size in the model's own tokens, when the answer named it. */
  readonly promptTokens?: number;
  /** The server ran out of a context it shares between parallel requests (mid-stream, not at the start). */
  readonly shared: boolean;
  constructor(message: string, opts: { contextTokens?: number; promptTokens?: number; shared?: boolean; hint?: string; cause?: unknown } = {}) {
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
  override readonly status = 500;
  override readonly exitCode = 2;
}

/** The backend in use cannot do this (the remote wire contract has no such operation). */
export class NotSupportedError extends MgptError {
  override readonly status = 400;
  override readonly exitCode = 2;
}

/** The operation was cancelled by the caller (Ctrl-C, a dropped client). */
export class CancelledError extends MgptError {
  override readonly status = 499;
  override readonly exitCode = 1;
  constructor(message = 'cancelled') {
    super(message);
  }
}

/** What a cancelled entity turn says, on either backend: the server drops a turn whose client left. */
export const TURN_CANCELLED = 'cancelled: nothing of this turn was stored';

/**
 * A typed error thrown by another bundle of the CLI (`mgpt serve`'s server bundle and the chat
 * screen keep their own copy of these classes, so `instanceof` fails on them) as one of ours: the
 * same message, hint, status and exit code. Anything else is returned unchanged.
 */
export function fromOtherBundle(err: unknown): unknown {
  if (err instanceof MgptError || !(err instanceof Error)) return err;
  const { exitCode, status, hint } = err as Partial<MgptError>;
  if (typeof exitCode !== 'number' || typeof status !== 'number') return err;
  const copy = new (class extends MgptError {
    override readonly status = status!;
    override readonly exitCode = exitCode!;
  })(err.message, { hint, cause: err });
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
    return new MgptError(`${subject}the disk is full`, { ...opts, hint: 'free some space (or use a file on another disk) and retry' });
  }
  if (code.startsWith('SQLITE_IOERR')) {
    // SQLite's I/O errors hide the errno; on a full disk it cannot even grow its shared-memory file.
    return new MgptError(`a disk I/O error on the database (${code})`, { ...opts, hint: 'check that its disk is not full and is working' });
  }
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') {
    return new MgptError(`${subject}the database is read-only`, {
      ...opts,
      hint: 'reading commands still work; to write, make the database file and its directory writable (or pass another --db)',
    });
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new MgptError(`${subject}permission denied`, { ...opts, hint: 'check the permissions of the file and its directory' });
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
 * SQLite's "database is locked" (SQLITE_BUSY and its extended codes) as a 409 that clears by
 * itself: another process held the file's write lock for longer than the connection waits (its
 * busy_timeout). Another writer is exactly what a conflict is, so the loser of a contended turn
 * exits 5 like any other, never as a fault (1) or, behind `mgpt serve`, a server error (7).
 * Undefined for anything else.
 */
export function databaseBusy(err: unknown): ConflictError | undefined {
  const code = typeof err === 'object' && err !== null ? String((err as { code?: unknown }).code ?? '') : '';
  if (!code.startsWith('SQLITE_BUSY')) return undefined;
  return new ConflictError('the database is busy: another process held its write lock for longer than mgpt waits', {
    cause: err,
    hint: 'retry in a moment; if it stays busy, look for a process keeping a transaction open on the database file',
  });
}
