import type { ModelPrice } from '../core/models.js';
import type { ChatModel } from '../providers/spec.js';
import type { Store } from '../store/store.js';
import type { WindowCache } from './window-cache.js';

export interface EngineLimits {
  windowBudget: number;
  transcriptCap: number;
  /** How long a turn's lease lives without a refresh; a crashed holder's lease expires after it. */
  leaseTtlMs: number;
}

export interface Clock {
  now(): number;
  iso(): string;
}

/** Everything the engine's services share; tests swap the clock, ids and models. */
export interface EngineDeps {
  store: Store;
  windows: WindowCache;
  limits: EngineLimits;
  prices: Readonly<Record<string, ModelPrice>>;
  chatModel(platformId: string): Promise<ChatModel>;
  clock: Clock;
  newId(): string;
  version: string;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  iso: () => new Date().toISOString(),
};
