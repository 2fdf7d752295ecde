import type { Backend } from '../core/backend.js';
import { type Env, type GlobalFlags, type Settings, resolveSettings } from '../config/config.js';
import type { ModelRoute } from '../core/models.js';

export interface EngineSettings {
  db: string;
  /** Only the default data directory is created when missing. */
  createDbDir: boolean;
  windowBudget: number;
  transcriptCap: number;
  leaseTtlMs?: number;
  prices: Settings['prices'];
  version: string;
  route: (id: string) => ModelRoute;
  promptsDir: string;
}

export interface Io {
  stdout: { write(chunk: string | Uint8Array): boolean };
  stderr: { write(chunk: string): boolean };
  stdin: NodeJS.ReadableStream;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  stdinIsTTY: boolean;
  /** The terminal's width when stdout is one; tables fit it. */
  columns?: number;
}

export interface CliFlags extends GlobalFlags {
  verbose?: boolean;
}

/** Everything a command touches, so tests can swap io, environment and backend. */
export interface CliContext {
  io: Io;
  env: Env;
  version: string;
  flags: CliFlags;
  /** A command that finished but failed in part (batch, chat's line mode) sets the exit code here. */
  exitCode: number;
  /** Aborted on SIGINT, SIGTERM or SIGHUP: a turn in flight is cancelled and leaves no trace. */
  signal: AbortSignal;
  /** A command that drains after a signal (serve) asks for this long before the process is ended. */
  extendGrace(ms: number): void;
  settings(): Settings;
  /** How to open the embedded engine (local backend and `mgpt serve`). */
  engineOptions(): EngineSettings;
  backend(): Promise<Backend>;
  close(): Promise<void>;
}

export interface ContextOptions {
  io: Io;
  env: Env;
  version: string;
  signal: AbortSignal;
  extendGrace?: (ms: number) => void;
  /** Tests inject a backend; otherwise the local one is built from settings on first use. */
  backend?: Backend;
}

export function createContext(opts: ContextOptions): CliContext {
  let settings: Settings | undefined;
  let backend: Promise<Backend> | undefined = opts.backend ? Promise.resolve(opts.backend) : undefined;
  const ctx: CliContext = {
    io: opts.io,
    env: opts.env,
    version: opts.version,
    flags: {},
    exitCode: 0,
    signal: opts.signal,
    extendGrace: opts.extendGrace ?? (() => {}),
    settings() {
      settings ??= resolveSettings(opts.env, ctx.flags);
      return settings;
    },
    engineOptions() {
      const s = ctx.settings();
      return {
        db: s.db,
        createDbDir: s.dbIsDefault,
        windowBudget: s.windowBudget,
        transcriptCap: s.transcriptCap,
        leaseTtlMs: s.leaseTtlMs,
        prices: s.prices,
        version: opts.version,
        route: s.route,
        promptsDir: s.promptsDir,
      };
    },
    backend() {
      backend ??= (async () => {
        const s = ctx.settings();
        if (s.backend === 'remote') {
          const { RemoteBackend } = await import('../backends/remote/remote-backend.js');
          return new RemoteBackend({ baseUrl: s.baseUrl, entitiesUrl: s.entitiesUrl, apiKey: s.apiKey, dev: s.dev, userId: s.userId });
        }
        // Loaded here, not at startup: the engine pulls in SQLite and the providers.
        const { LocalBackend } = await import('../backends/local.js');
        return new LocalBackend(ctx.engineOptions());
      })();
      return backend;
    },
    async close() {
      if (backend) await (await backend.catch(() => undefined))?.close();
    },
  };
  return ctx;
}
