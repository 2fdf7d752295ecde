import {
  AuthError,
  BadRequestError,
  ConflictError,
  type FieldError,
  ForbiddenError,
  isErrorCode,
  MgptError,
  NotFoundError,
  PayloadTooLargeError,
  PaymentRequiredError,
  ProviderError,
} from '../../core/errors.js';

/**
 * One factory from an HTTP status and body to the typed errors the engine throws (openai-node's
 * APIError.generate), so callers never branch on the transport. Reads both seeds' shapes:
 * `{ error }` (entities) and `{ detail, errors? }` (universes), and OpenAI's `{ error: { message } }`
 * (the facade's chat completions).
 */
export function errorFromResponse(status: number, body: unknown, requestId?: string, errorCode?: string): MgptError {
  const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const openai = (typeof b.error === 'object' && b.error !== null ? b.error : {}) as { message?: unknown };
  const message = (typeof b.error === 'string' && b.error) || (typeof b.detail === 'string' && b.detail) || (typeof openai.message === 'string' && openai.message) || `HTTP ${status}`;
  const hint = requestId ? `request id ${requestId}` : undefined;
  // mgpt serve names each error's code in a header (ERROR_CODE_HEADER); another server's errors take their class's.
  const code = isErrorCode(errorCode) ? errorCode : undefined;
  // mgpt serve names the entity an error is about by id beside the message, which names it by name.
  const entityId = typeof b.entity_id === 'string' ? b.entity_id : undefined;
  const known = { hint, code, entityId };
  switch (status) {
    case 400:
      return new BadRequestError(message, { errors: Array.isArray(b.errors) ? (b.errors as FieldError[]) : undefined, ...known });
    case 401:
      return new AuthError(message, { hint: 'check the API key: mgpt login', code });
    case 402:
      return new PaymentRequiredError(message, {
        balanceUsd: Number(b.balanceUsd ?? 0),
        billedUsd: Number(b.billedUsd ?? 0),
        missingUsd: Number(b.missingUsd ?? 0),
      }, { code, detailed: code === 'payment_required' });
    case 403:
      return new ForbiddenError(message, known);
    case 404:
      return new NotFoundError(message, known);
    case 409:
      return new ConflictError(message, known);
    case 413:
      return new PayloadTooLargeError(message, { ...known, hint: (typeof b.hint === 'string' && b.hint) || hint });
    case 408:
      return new ProviderError(`the server timed out waiting for the request: ${message}`, { status, upstreamStatus: status, retryable: true, hint });
    case 429:
      return new ProviderError(`rate limited by the server: ${message}`, { status, upstreamStatus: status, retryable: true, hint: hint ?? 'wait a little and retry' });
    default:
      // A 503 names what is unavailable (the database) and what to do in its own `hint`.
      return status >= 500
        ? new ProviderError(`server error ${status}: ${message}`, { status, upstreamStatus: status, retryable: true, hint: (typeof b.hint === 'string' && b.hint) || hint })
        : new BadRequestError(`HTTP ${status}: ${message}`, { hint, code });
  }
}
