import { type LocalAdmin, notOnRemote } from '../core/backend.js';
import type { ChatSources } from './chat-types.js';

/** A thrown value as one line and a hint, whichever bundle's error class it is. */
export function describeError(err: unknown): { text: string; hint?: string; status?: number; exitCode?: number; details?: Record<string, unknown> } {
  const e = err as { message?: string; hint?: string; status?: number; exitCode?: number; details?: Record<string, unknown> };
  return { text: e?.message ?? String(err), hint: e?.hint, status: e?.status, exitCode: e?.exitCode ?? 1, details: e?.details };
}

/** Ctrl-C, a dropped connection, or the engine's own cancellation. */
export function isCancel(err: unknown): boolean {
  const e = err as { name?: string; status?: number };
  return e?.name === 'AbortError' || e?.name === 'CancelledError' || e?.status === 499;
}

/** The engine's universe reads; against a remote server, the same error `mgpt <what>` gives there. */
export function needAdmin(src: ChatSources, what: string): LocalAdmin {
  if (!src.admin) throw notOnRemote(what);
  return src.admin;
}
