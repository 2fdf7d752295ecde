/** A reply returned again for its idempotency key says so (an extension; Stripe's header name). */
export function replayHeader(replayed: boolean): Record<string, string> {
  return replayed ? { 'Idempotent-Replayed': 'true' } : {};
}
