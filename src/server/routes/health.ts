import { Hono } from 'hono';
import { MgptError } from '../../core/errors.js';
import type { Engine } from '../../engine/engine.js';

/** How long /readyz waits for the database before it answers 503. */
export const READY_TIMEOUT_MS = 5_000;

/**
 * Probes for a load balancer or an orchestrator, without a key: `/healthz` says the process is up
 * (it touches no database), `/readyz` that the database answers (503 with the reason otherwise).
 */
export function healthRoutes(engine: Engine): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    try {
      await withTimeout(engine.store.ping(), READY_TIMEOUT_MS);
      return c.json({ status: 'ready', database: engine.store.kind });
    } catch (err) {
      const known = err instanceof MgptError;
      return c.json(
        {
          status: 'unavailable',
          database: engine.store.kind,
          error: known ? err.message : `the database did not answer: ${(err as Error).message ?? String(err)}`,
          hint: (known && err.hint) || 'check that the database is running and reachable from this replica',
        },
        503,
      );
    }
  });
  return app;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
