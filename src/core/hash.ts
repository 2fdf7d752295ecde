import { createHash } from 'node:crypto';

/** Hex sha256 of text or bytes: idempotency fingerprints, prompt fingerprints, archive checks. */
export function sha256(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}
