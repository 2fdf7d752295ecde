import type { Clock } from './support/clock.js';
import type { RotationShares } from '../core/window-plan.js';
import type { ModelPrice } from '../core/models.js';
import type { RouteCalibration } from './generation/calibration.js';
import type { EngineEvents } from './events.js';
import type { ChatModel } from '../providers/spec.js';
import type { PromptStore } from './universes/prompts.js';
import type { Store, TermMatch, UniverseMessageRow } from '../store/types.js';
import type { VersionedCache } from './support/versioned-cache.js';
import type { WindowState } from './entities/window/window-state.js';
import type { SemanticIndex } from './entities/semantic/semantic-index.js';

export interface EngineLimits {
  windowBudget: number;
  transcriptCap: number;
  /** The highest cap an entity's transcript may be raised to (`entities update --cap`, PATCH `cap_tokens`). */
  maxTranscriptCap: number;
  /** How long a turn's lease lives without a refresh; a crashed holder's lease expires after it. */
  leaseTtlMs: number;
  /** What a rotation brings the whole window to, and what one summary may take, as shares of the budget and the model's limit. */
  rotation: RotationShares;
  /** The most automatic recall adds to a turn's prompt, in estimated tokens (a fifth of a known model context at most). */
  recallTokens: number;
  /** Pinned memory: the most blocks an entity may have, and the most tokens they may hold together. */
  memory: { blocks: number; tokens: number };
  /** The most conversations one chat import may hold (a larger export is a 413 before anything is read). */
  importMaxConversations: number;
}


/** Everything the engine's services share; tests swap the clock, ids and models. */
export interface EngineDeps {
  store: Store;
  windows: VersionedCache<WindowState>;
  universeCache: VersionedCache<UniverseMessageRow[]>;
  /** Recall's matches of a term before a window's first live message (retrieve.ts), by entity. */
  termMatches: VersionedCache<TermMatch[] | null>;
  limits: EngineLimits;
  prices: Readonly<Record<string, ModelPrice>>;
  /** The model a platform id or alias routes to; `modelOverride` replaces the provider model. */
  chatModel(platformId: string, modelOverride?: string): Promise<ChatModel>;
  /** The names of models added with `mgpt models add`, which a chat completion may name. */
  namedModels: ReadonlySet<string>;
  prompts: PromptStore;
  /** What each route's model revealed about its tokens and context. */
  calibration: RouteCalibration;
  /** Who hears what the engine does (serve's /metrics); NO_EVENTS when nobody does. */
  events: EngineEvents;
  clock: Clock;
  newId(): string;
  version: string;
  /** The folder imports keep their temporary files in (support/spool-folder.ts). */
  spoolDir: string;
  /** Semantic recall's vectors, for entities whose route opted in to embeddings. */
  semantic: SemanticIndex;
}

export { type Clock, systemClock } from './support/clock.js';
