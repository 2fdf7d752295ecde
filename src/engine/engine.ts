import { tmpdir } from 'node:os';
import { randomUUID } from 'node:crypto';
import { DEFAULT_TRANSCRIPT_CAP, DEFAULT_WINDOW_BUDGET } from '../core/wire/entity-types.js';
import { BadRequestError, ConfigError } from '../core/errors.js';
import type { GenerationResponse, ImageRequest, ImageResponse, RespondInput } from '../core/wire/universe-types.js';
import { DEFAULT_PRICES, type ModelPrice, type ModelRoute, sharedSlotsProblem } from '../core/models.js';
import { DEFAULT_ROTATE_TARGET, DEFAULT_SUMMARY_SHARE, type RotationShares } from '../core/window-plan.js';
import { DEFAULT_RECALL_TOKENS } from '../core/text/recall-query.js';
import { MemoryService } from './entities/memory.js';
import { DEFAULT_MEMORY_BLOCKS, DEFAULT_MEMORY_TOKENS } from '../core/wire/memory.js';
import { createChatModel } from '../providers/registry.js';
import type { Store } from '../store/types.js';
import { AccountService } from './platform/accounts.js';
import { SharedContextGates } from './generation/shared-gate.js';
import type { EngineEvents } from './events.js';
import { EventRelay } from './support/event-relay.js';
import { search } from './search.js';
import type { SearchInput, SearchList } from '../core/wire/entity-types.js';
import { type ChatImportOptions, type ChatImportProgressHandler, type ChatImportResult, DEFAULT_IMPORT_MAX_CONVERSATIONS } from '../core/wire/chat-import.js';
import { importChats } from './imports/import-run.js';
import { RouteCalibration } from './generation/calibration.js';
import { SemanticIndex } from './entities/semantic/semantic-index.js';
import { checkEmbeddingRoute } from './entities/semantic/embedding-route.js';
import { type Clock, type EngineDeps, type EngineLimits, systemClock } from './deps.js';
import { EntityService } from './entities/entities.js';
import { checkBudget } from './entities/entity-rules.js';
import { generateImage } from './universes/images.js';
import { KeyService } from './platform/keys.js';
import { RateLimitService } from './platform/rate-limits.js';
import { LogService } from './platform/logs.js';
import { UsageService } from './platform/usage.js';
import { ChatService } from './openai/chat-service.js';
import { ResponsesService } from './openai/responses/responses-service.js';
import { ConversationsService } from './openai/responses/conversations-service.js';
import { type RespondOptions, type ResponseDelta, respond, respondEvents } from './universes/respond.js';
import { UniverseService } from './universes/universes.js';
import { PromptStore } from './universes/prompts.js';
import { VersionedCache } from './support/versioned-cache.js';

export { DEFAULT_LEASE_TTL_MS } from '../core/wire/entity-types.js';
import { DEFAULT_LEASE_TTL_MS } from '../core/wire/entity-types.js';

export interface EngineOptions {
  /** An open store (SQLite or PostgreSQL); openEngine() and openEngineSync() open one from --db. */
  store: Store;
  /** Who hears what the engine does (serve's /metrics). */
  events?: EngineEvents;
  /** Where each platform model id goes; default: the built-in echo provider. */
  route?: (platformId: string) => ModelRoute;
  /** Models added with `mgpt models add`: a chat completion (the facade, `mgpt ask -m`) may name one. */
  namedModels?: readonly string[];
  /** Directory of stored prompts (universes). */
  promptsDir?: string;
  /** The folder imports keep their temporary files in (an upload, an `--into` ordering); default: the OS's temporary folder. */
  spoolDir?: string;
  windowBudget?: number;
  transcriptCap?: number;
  /** The highest cap an entity's transcript may be given (`entities update --cap`); at least `transcriptCap` (default 1,000,000). */
  maxTranscriptCap?: number;
  leaseTtlMs?: number;
  /** What a rotation brings the whole window to, in percent of the budget and the model's limit (default 25). */
  rotateTargetPercent?: number;
  /** The most one summary may take, in percent of the same (default 10). */
  summaryPercent?: number;
  /** The most automatic recall adds to a turn's prompt, in tokens (default 1000). */
  recallTokens?: number;
  /** The most pinned memory blocks an entity may have (default 16). */
  memoryBlocks?: number;
  /** The most tokens an entity's pinned memory may hold in all (default 2000). */
  memoryTokens?: number;
  /** The most conversations one chat import may hold (default 100,000). */
  importMaxConversations?: number;
  prices?: Record<string, ModelPrice>;
  clock?: Clock;
  newId?: () => string;
  version?: string;
}

/**
 * Terms whose matches a process keeps for recall: a few questions' worth for each of the entities
 * it serves at once. An entry is at most 499 rows of two numbers, so even all of them at that
 * size stay near 10 MB; most terms match a handful of messages.
 */
const TERM_CACHE_ENTRIES = 512;

/** The embedded engine: the services over one store it is given (it never opens one itself). */
export class Engine {
  readonly store: Store;
  readonly entities: EntityService;
  /** Pinned memory of entities. */
  readonly memory: MemoryService;
  readonly accounts: AccountService;
  readonly universes: UniverseService;
  readonly logs: LogService;
  readonly usage: UsageService;
  readonly keys: KeyService;
  /** Requests and tokens per minute of API keys (mgpt serve admits each model request through it). */
  readonly rateLimits: RateLimitService;
  /** Stored prompts (the prompts directory) universes are created from. */
  readonly prompts: PromptStore;
  /** The OpenAI-compatible facade (GET /v1/models, POST /v1/chat/completions) over the services above. */
  readonly openai: ChatService;
  /** OpenAI's Responses API over entities (docs/openai-clients.md#the-responses-api). */
  readonly responses: ResponsesService;
  /** OpenAI's Conversations API: a conversation is an entity. */
  readonly conversations: ConversationsService;
  readonly deps: EngineDeps;
  /** What the engine does, told to every listener attached (serve's /metrics attaches one). */
  readonly events: EventRelay;

  constructor(opts: EngineOptions) {
    const limits = engineLimits(opts);
    this.store = opts.store;
    const clock = opts.clock ?? systemClock;
    const calibration = new RouteCalibration(this.store, clock);
    const gates = new SharedContextGates(calibration);
    this.events = new EventRelay(opts.events);
    const route = (id: string): ModelRoute => opts.route?.(id) ?? { provider: 'echo' };
    this.deps = {
      store: this.store,
      windows: new VersionedCache(),
      universeCache: new VersionedCache(),
      termMatches: new VersionedCache(TERM_CACHE_ENTRIES),
      limits,
      prices: { ...DEFAULT_PRICES, ...opts.prices },
      chatModel: (id, modelOverride) => {
        const r = route(id);
        const problem = routeProblem(id, r);
        if (problem) return Promise.reject(problem);
        // A malformed embeddings setting fails the route's every turn, as a malformed route does, not only its recalls.
        checkEmbeddingRoute(id, r);
        const model = createChatModel(id, modelOverride ? { ...r, model: modelOverride } : r);
        return model.then((m) => gates.wrap(m));
      },
      namedModels: new Set(opts.namedModels ?? []),
      prompts: new PromptStore(this.store.prompts, opts.promptsDir ?? null),
      calibration,
      events: this.events,
      clock,
      newId: opts.newId ?? randomUUID,
      version: opts.version ?? '0.0.0',
      spoolDir: opts.spoolDir ?? tmpdir(),
      semantic: new SemanticIndex({ store: this.store, events: this.events, route }),
    };
    this.entities = new EntityService(this.deps);
    this.memory = new MemoryService(this.deps);
    this.accounts = new AccountService(this.deps);
    this.universes = new UniverseService(this.deps);
    this.logs = new LogService(this.deps);
    this.usage = new UsageService(this.deps);
    this.keys = new KeyService(this.deps, this.accounts);
    this.rateLimits = new RateLimitService(this.deps);
    this.prompts = this.deps.prompts;
    const facade = { entities: this.entities, universes: this.universes, accounts: this.accounts, respondEvents: this.respondEvents.bind(this) };
    this.openai = new ChatService(facade, this.deps);
    this.responses = new ResponsesService({ entities: this.entities }, this.deps);
    this.conversations = new ConversationsService(this.entities, this.deps);
  }

  /** POST /responses (seed 000). `input` comes from parseRespond (core/wire/universe-input.ts); the engine checks it again. */
  respond(input: RespondInput, opts: RespondOptions & { xRequestId?: string; onDelta?: (text: string) => void } = {}): Promise<GenerationResponse> {
    const res = respond(this.deps, this.universes, input, opts);
    // Mirrored per call (docs/design.md#requestid), also on a replayed stored response.
    const x = opts.xRequestId;
    return x === undefined ? res : res.then((r) => ({ ...r, diagnostics: { ...r.diagnostics, xRequestId: x } }));
  }

  /** The same turn as events (the reply's text as it comes, then the response), for callers that stream it. */
  respondEvents(input: RespondInput, opts: RespondOptions = {}): AsyncGenerator<ResponseDelta, GenerationResponse> {
    return respondEvents(this.deps, this.universes, input, opts);
  }

  /** POST /images (seed 000). */
  generateImage(input: ImageRequest, opts: { userId?: string; signal?: AbortSignal } = {}): Promise<ImageResponse> {
    return generateImage(this.deps, input, opts);
  }

  /** Searches the account's entity transcripts, universe conversations or generation logs (an extension; see search.ts). */
  search(input: SearchInput, accountId: string): Promise<SearchList> {
    return search(this.deps, input, accountId);
  }

  /** Imports another tool's chat export (the file at `path`) into the account's entities (docs/importing.md). */
  importChats(path: string, opts: ChatImportOptions, accountId: string, onProgress?: ChatImportProgressHandler, signal?: AbortSignal): Promise<ChatImportResult> {
    return importChats(this.deps, path, opts, accountId, onProgress, signal);
  }

  /** Closes the store once the messages being embedded in the background are stored. */
  async close(): Promise<void> {
    await this.deps.semantic.drain();
    return this.store.close();
  }
}

/** Why a route's settings cannot be used (a config file edited by hand), or undefined. */
function routeProblem(id: string, route: ModelRoute): ConfigError | undefined {
  const slots = sharedSlotsProblem(route.sharedSlots);
  if (!slots) return undefined;
  return new ConfigError(`model ${id}: sharedSlots ${slots}`, { hint: `mgpt config set models.${id}.sharedSlots 4 (or unset it: the server's /props says)` });
}

/** The limits `opts` asks for, checked: openEngine checks them before it opens a store. */
export function engineLimits(opts: Pick<EngineOptions, 'windowBudget' | 'transcriptCap' | 'maxTranscriptCap' | 'leaseTtlMs' | 'rotateTargetPercent' | 'summaryPercent' | 'recallTokens' | 'memoryBlocks' | 'memoryTokens' | 'importMaxConversations'>): EngineLimits {
  return {
    windowBudget: checkBudget(opts.windowBudget ?? DEFAULT_WINDOW_BUDGET, 'window budget'),
    transcriptCap: positive(opts.transcriptCap ?? DEFAULT_TRANSCRIPT_CAP, 'transcript cap'),
    // New entities get transcriptCap: the ceiling is never below it.
    maxTranscriptCap: Math.max(positive(opts.maxTranscriptCap ?? DEFAULT_TRANSCRIPT_CAP, 'highest transcript cap'), opts.transcriptCap ?? DEFAULT_TRANSCRIPT_CAP),
    leaseTtlMs: positive(opts.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS, 'lease TTL'),
    rotation: rotationShares(opts.rotateTargetPercent ?? DEFAULT_ROTATE_TARGET * 100, opts.summaryPercent ?? DEFAULT_SUMMARY_SHARE * 100),
    recallTokens: positive(opts.recallTokens ?? DEFAULT_RECALL_TOKENS, 'recall tokens'),
    memory: {
      blocks: positive(opts.memoryBlocks ?? DEFAULT_MEMORY_BLOCKS, 'pinned memory blocks'),
      tokens: positive(opts.memoryTokens ?? DEFAULT_MEMORY_TOKENS, 'pinned memory tokens'),
    },
    importMaxConversations: positive(opts.importMaxConversations ?? DEFAULT_IMPORT_MAX_CONVERSATIONS, 'import conversation limit'),
  };
}

/** The rotation's shares from percents: a target from 20 to 90, a summary from 5 up to half the target. */
function rotationShares(targetPercent: number, summaryPercent: number): RotationShares {
  if (!Number.isSafeInteger(targetPercent) || targetPercent < 20 || targetPercent > 90) {
    throw new BadRequestError(`the rotation target must be a percent from 20 to 90, got ${targetPercent}`, { hint: 'mgpt config set engine.rotateTargetPercent 25' });
  }
  if (!Number.isSafeInteger(summaryPercent) || summaryPercent < 5 || summaryPercent > targetPercent / 2) {
    throw new BadRequestError(`the summary share must be a percent from 5 to half the rotation target (${Math.floor(targetPercent / 2)}), got ${summaryPercent}`, { hint: 'mgpt config set engine.summaryPercent 10' });
  }
  return { target: targetPercent / 100, summary: summaryPercent / 100 };
}

function positive(n: number, what: string): number {
  if (!Number.isSafeInteger(n) || n < 1) throw new BadRequestError(`${what} must be a positive integer, got ${n}`);
  return n;
}
