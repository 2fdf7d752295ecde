import type { Context } from 'hono';
import { BadRequestError, ERROR_CODE_HEADER, MgptError, PaymentRequiredError, RateLimitedError, isAbortError } from '../core/errors.js';
import type { Env } from './env.js';
import { closeIfBodyUnread } from './json-body.js';
import { refusalHeaders } from './rate-limit.js';
import { requestIdFrom } from './request-id.js';

/**
 * An error as each seed answers it: `{ error }` on entity routes, `{ detail, errors? }` on
 * universe routes (the OpenAI facade has its own, in routes/openai-compat.ts). A client that went
 * away gets 499; an error that is not the engine's is a plain 500 that says nothing of its cause.
 */
export function errorResponse(c: Context<Env>, err: unknown): Response {
  const known = err instanceof MgptError;
  const status = isAbortError(err) ? 499 : known ? err.status : 500;
  const message = known || isAbortError(err) ? (err as Error).message : 'internal error';
  const entityRoute = c.req.path.startsWith('/v1/');
  let payload: Record<string, unknown>;
  if (entityRoute) {
    payload = { error: message };
    if (err instanceof PaymentRequiredError) Object.assign(payload, err.details);
  } else {
    payload = { detail: message };
    if (err instanceof BadRequestError && err.errors?.length) payload.errors = err.errors;
    if (err instanceof PaymentRequiredError) Object.assign(payload, err.details);
  }
  // An extension on both contracts: the entity an error is about, by id (its message names it by name).
  if (known && err.entityId) payload.entity_id = err.entityId;
  // An extension on both contracts: a 503 (the database is unavailable) and a 413 (an import over
  // the server's conversation limit: split it, or ask for a higher one) say what to do.
  if (known && (status === 503 || status === 413) && err.hint) payload.hint = err.hint;
  const res = c.json(payload, status as 400, err instanceof RateLimitedError ? refusalHeaders(err) : undefined);
  res.headers.set('X-Request-Id', c.get('requestId') ?? requestIdFrom(undefined).id);
  // An extension beside both contracts' bodies, which stay as the seeds give them: the error's
  // stable code (docs/design.md#errors-and-their-codes), which the remote backend reads.
  if (known) res.headers.set(ERROR_CODE_HEADER, err.code);
  return closeIfBodyUnread(res, err);
}
