import { type Backend, type LocalAdmin, notOnRemote } from '../core/backend.js';
import { type Env, type GlobalFlags, type Settings, resolveSettings } from '../config/config.js';
import type { ModelRoute } from '../core/models.js';
import type { MigrationStep } from '../store/migration-step.js';
import type { JsonFilter } from './json-flags.js';

export interface EngineSettings {
  db: string;
  /** Only the default data directory is created when missing. */
  createDbDir: boolean;
  windowBudget: number;
  transcriptCap: number;
  maxTranscriptCap: number;
  leaseTtlMs?: number;
  rotateTargetPercent: number;
  summaryPercent: number;
  recallTokens: number;
  memoryBlocks: number;
  memoryTokens: number;
  importMaxConversations: number;
  /** PostgreSQL only: connections per process. */
  poolSize?: number;
  prices: Settings['prices'];
  version: string;
  route: (id: string) => ModelRoute;
  namedModels: string[];
  promptsDir: string;
  spoolDir: string;
  /** Told of each schema migration opening the database runs. */
  onMigrate?: (step: MigrationStep) => void;
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
  /** What `--json FIELDS` and `--jq` keep of a JSON document (json-flags.ts); unset, all of it. */
  jsonFilter?: JsonFilter;
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
  /**
   * Tells the person something while a command works (a wait for a server's rate limit): a line
   * on stderr, unless a screen that owns the terminal (the chat REPL) shows it instead.
   */
  notice: (text: string) => void;
  settings(): Settings;
  /** How to open the embedded engine (local backend and `mgpt serve`). */
  engineOptions(): EngineSettings;
  backend(): Promise<Backend>;
  /**
   * The engine's administration (accounts, keys, prompts, universes read back, import), which only
   * the local backend has; against a remote server it fails with a hint naming `what` (e.g. "keys list").
   */
  admin(what: string): Promise<LocalAdmin>;
  close(): Promise<void>;
}

export interface ContextOptions {
  io: Io;
  env: Env;
  version: string;
  signal: AbortSignal;
  extendGrace?: (ms: number) => void;
  /** Tests inject a backend (and the local administration beside it, if any); otherwise they are built from settings on first use. */
  backend?: Backend;
  admin?: LocalAdmin;
}

/** The backend a context opened, with the local administration when the backend is the embedded engine. */
interface Opened {
  backend: Backend;
  admin?: LocalAdmin;
}

export function createContext(opts: ContextOptions): CliContext {
  let settings: Settings | undefined;
  let opened: Promise<Opened> | undefined = opts.backend ? Promise.resolve({ backend: opts.backend, admin: opts.admin }) : undefined;
  const open = (): Promise<Opened> =>
    (opened ??= (async () => {
      const s = ctx.settings();
      if (s.backend === 'remote') {
        const { RemoteBackend } = await import('../backends/remote/remote-backend.js');
        // A request the server rate limits is retried after the wait it asks for; the person sees the wait.
        const onRateLimitWait = (text: string) => ctx.notice(text);
        // Names are unique on every backend: the engine refuses a taken one on create.
        return { backend: new RemoteBackend({ baseUrl: s.baseUrl, entitiesUrl: s.entitiesUrl, apiKey: s.apiKey, dev: s.dev, userId: s.userId, onRateLimitWait, uniqueNames: true }) };
      }
      // Loaded here, not at startup: the engine pulls in SQLite and the providers.
      const { LocalBackend } = await import('../backends/local.js');
      const { openEngine } = await import('../engine/open-engine.js');
      const local = new LocalBackend(await openEngine(ctx.engineOptions()), { uniqueNames: true });
      return { backend: local, admin: local.admin };
    })());
  const ctx: CliContext = {
    io: opts.io,
    env: opts.env,
    version: opts.version,
    flags: {},
    exitCode: 0,
    signal: opts.signal,
    extendGrace: opts.extendGrace ?? (() => {}),
    notice: (text) => opts.io.stderr.write(`mgpt: ${text}\n`),
    settings() {
      settings ??= resolveSettings(opts.env, ctx.flags);
      return settings;
    },
    engineOptions() {
      return engineSettings(ctx.settings(), opts);
    },
    async backend() {
      return (await open()).backend;
    },
    async admin(what: string) {
      const { admin } = await open();
      if (!admin) throw notOnRemote(what);
      return admin;
    },
    async close() {
      if (opened) await (await opened.catch(() => undefined))?.backend.close();
    },
  };
  return ctx;
}

/**
 * An existing database being upgraded says so on stderr, step by step (building the search index
 * over a large transcript takes a while, once); a new database is created silently.
 */
function migrationNotice(io: Io, step: MigrationStep): void {
  if (!step.upgrade) return;
  const at = `${step.version} of ${step.total}`;
  if (step.ms === undefined) io.stderr.write(`mgpt: upgrading the database (${at}): ${step.what}…\n`);
  else io.stderr.write(`mgpt: upgraded (${at}) in ${(step.ms / 1000).toFixed(1)} s\n`);
}

/** What the engine is opened with, from the resolved settings. */
function engineSettings(s: Settings, opts: ContextOptions): EngineSettings {
  return {
    db: s.db,
    createDbDir: s.dbIsDefault,
    windowBudget: s.windowBudget,
    transcriptCap: s.transcriptCap,
    maxTranscriptCap: s.maxTranscriptCap,
    leaseTtlMs: s.leaseTtlMs,
    rotateTargetPercent: s.rotateTargetPercent,
    summaryPercent: s.summaryPercent,
    recallTokens: s.recallTokens,
    memoryBlocks: s.memoryBlocks,
    memoryTokens: s.memoryTokens,
    importMaxConversations: s.importMaxConversations,
    poolSize: s.poolSize,
    prices: s.prices,
    version: opts.version,
    route: s.route,
    namedModels: s.namedModels,
    promptsDir: s.promptsDir,
    spoolDir: s.spoolDir,
    onMigrate: (step) => migrationNotice(opts.io, step),
  };
}
