import type { MiddlewareHandler } from 'hono';
import type { Env } from './env.js';

/**
 * Gives every request a `signal` that aborts when its client goes away before the answer is
 * complete: what the client asked for is cancelled (a turn then leaves no trace). Without a node
 * response (the app called in-process) it never aborts.
 */
export function cancelOnDisconnect(): MiddlewareHandler<Env> {
  return async (c, next) => {
    const abort = new AbortController();
    const out = c.env?.outgoing;
    out?.once('close', () => {
      if (!out.writableFinished) abort.abort();
    });
    c.set('signal', abort.signal);
    await next();
  };
}
