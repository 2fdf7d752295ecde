import type { Server } from 'node:http';
import { type ServerType, serve } from '@hono/node-server';
import { Engine } from '../engine/engine.js';
import { type OpenEngineOptions, openEngine } from '../engine/open-engine.js';
import { sweepSpools } from '../engine/support/spool-folder.js';
import { type AppOptions, createApp } from './app.js';
import { ServerMetrics } from './metrics.js';
import { answerClientErrors } from './client-error.js';
import { lingerOnClose } from './lingering-close.js';
import { startConsoleSession } from './console.js';

export interface Listening {
  url: string;
  /** With `consoleSession`: the console's address with its one-time sign-in code in the fragment. */
  consoleUrl?: string;
  /** Stops accepting; requests in flight get up to `drainMs` to finish before their connections are cut. */
  close(drainMs?: number): Promise<void>;
}

/** Limits on slow or too many clients; the defaults suit an API server behind nothing. */
export interface ListenOptions extends AppOptions {
  /** Longest time to receive a request's headers (node: headersTimeout). */
  headersTimeoutMs?: number;
  /** Longest time to receive a whole request, body included; a streamed reply is not bound by it. */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs?: number;
  /** Connections beyond this are closed on arrival. */
  maxConnections?: number;
  /** Serve `GET /metrics`, counting what the engine does (mgpt serve does unless --no-metrics). */
  metricsEndpoint?: boolean;
  /** `mgpt console`: a key for this server's life (revoked at close) and a one-time code that hands it to the page. */
  consoleSession?: boolean;
  /** How long the console's key works after its last renewal (default CONSOLE_KEY_LIFETIME_MS). */
  consoleKeyLifetimeMs?: number;
  /** Told how many import spools of stopped processes the start removed from the engine's spool folder (when any). */
  onSpoolsSwept?: (removed: number, dir: string) => void;
}

export const LISTEN_DEFAULTS = { headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000, maxConnections: 1000 } as const;

/**
 * The socket listener: a few lines around the pure app. Port 0 picks a free port. Given options
 * rather than an engine, it opens one (PostgreSQL: connected and migrated before the port opens)
 * and closes it (the file, or the pool) after the drain.
 */
export async function listen(engine: Engine | OpenEngineOptions, host: string, port: number, opts: ListenOptions = {}): Promise<Listening> {
  const own = !(engine instanceof Engine);
  if (!(engine instanceof Engine) && engine.spoolDir) await sweepLeftSpools(engine.spoolDir, opts);
  const eng = engine instanceof Engine ? engine : await openEngine(engine);
  const handoff = opts.consoleSession ? await startConsoleSession(eng, opts.consoleKeyLifetimeMs).catch(async (err) => {
    if (own) await eng.close().catch(() => {});
    throw err;
  }) : undefined;
  const revoke = async () => {
    handoff?.stopRenewing();
    if (handoff) await eng.keys.revoke(handoff.keyId).catch(() => {});
  };
  try {
    await importPrompts(eng, opts);
    const l = await listenWith(eng, own, host, port, { ...opts, consoleHandoff: handoff }, revoke);
    return handoff ? { ...l, consoleUrl: `${l.url}/#code=${handoff.code}` } : l;
  } catch (err) {
    await revoke();
    if (own) await eng.close().catch(() => {});
    throw err;
  }
}

/**
 * Removes what imports of stopped processes left in the spool folder (a server killed mid-upload
 * leaves up to 8 GiB there). Not fatal: a server starts without the sweep, the files wait for a later one.
 */
async function sweepLeftSpools(dir: string, opts: ListenOptions): Promise<void> {
  const removed = await sweepSpools(dir).catch((err: unknown) => (opts.onUnexpectedError?.(err), 0));
  if (removed) opts.onSpoolsSwept?.(removed, dir);
}

/**
 * Imports the replica's prompts directory into the store before it listens, so what its directory
 * holds is on every replica of the database (docs/design.md#stored-prompts). A database that cannot
 * take them (read-only) still serves: the failure is reported, not fatal.
 */
async function importPrompts(eng: Engine, opts: ListenOptions): Promise<void> {
  if (eng.prompts.dir === null) return;
  await eng.prompts.importDir(eng.prompts.dir, { quiet: true }).catch((err: unknown) => opts.onUnexpectedError?.(err));
}

function listenWith(eng: Engine, own: boolean, host: string, port: number, opts: ListenOptions, beforeClose: () => Promise<void>): Promise<Listening> {
  const metrics = opts.metricsEndpoint ? new ServerMetrics(eng) : undefined;
  if (metrics) eng.events.attach(metrics.events);
  const app = createApp(eng, { ...opts, metrics });
  // A server commits all day: WAL checkpoints (and their fsyncs) go to a worker, not into a request's commit.
  const stopCheckpoints = eng.store.checkpointInBackground?.();
  const requestTimeout = opts.requestTimeoutMs ?? LISTEN_DEFAULTS.requestTimeoutMs;
  // node requires headersTimeout <= requestTimeout.
  const headersTimeout = Math.min(opts.headersTimeoutMs ?? LISTEN_DEFAULTS.headersTimeoutMs, requestTimeout);
  const serverOptions = {
    requestTimeout,
    headersTimeout,
    keepAliveTimeout: opts.keepAliveTimeoutMs ?? LISTEN_DEFAULTS.keepAliveTimeoutMs,
    // How often node looks for requests past their limits (its default, 30 s, would blunt short ones).
    connectionsCheckingInterval: Math.max(100, Math.min(1000, Math.floor(headersTimeout / 2))),
  };
  return new Promise((resolve, reject) => {
    let server: ServerType;
    try {
      // Bodies the app leaves unread are node's to drop (or lingeringClose's after a 413), not cut after 500 ms.
      server = serve({ fetch: app.fetch, hostname: host, port, serverOptions, autoCleanupIncoming: false }, (info) => {
        const shown = info.address.includes(':') ? `[${info.address}]` : info.address;
        resolve({
          url: `http://${shown}:${info.port}`,
          close: (drainMs = 0) =>
            new Promise<void>((r) => {
              server.close(() => {
                const stopped = stopCheckpoints?.() ?? Promise.resolve();
                void stopped.then(beforeClose).then(() => (own ? eng.close() : undefined)).then(r, r);
              });
              drain(server as Server, drainMs);
            }),
        });
      });
    } catch (err) {
      reject(err);
      return;
    }
    const http = server as Server;
    http.maxConnections = opts.maxConnections ?? LISTEN_DEFAULTS.maxConnections;
    answerClientErrors(http);
    lingerOnClose(http);
    server.on('error', (err) => {
      void stopCheckpoints?.();
      reject(err);
    });
  });
}

/**
 * Idle keep-alive sockets would hold close() open, so they are closed as they go idle; requests in
 * flight finish, up to `drainMs`, then their connections are cut (a cut turn leaves no trace).
 */
function drain(server: Server, drainMs: number): void {
  if (drainMs <= 0) {
    server.closeAllConnections();
    return;
  }
  server.closeIdleConnections();
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  const cut = setTimeout(() => server.closeAllConnections(), drainMs);
  server.once('close', () => {
    clearInterval(idle);
    clearTimeout(cut);
  });
}
