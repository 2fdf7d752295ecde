import type { ModelRoute } from '../../../core/models.js';
import { createEmbeddingModel } from '../../../providers/registry.js';
import type { EmbeddingModel } from '../../../providers/spec.js';
import type { EntityRow, Store, UnembeddedMessage } from '../../../store/types.js';
import type { EngineEvents } from '../../events.js';
import type { RankedSeq } from '../recall-rank.js';
import { checkEmbeddingRoute } from './embedding-route.js';
import { VectorCache } from './vector-cache.js';
import { rankByVector } from './vector-rank.js';

/** What the index uses: the store, the routes, and who hears how embedding went. */
export interface SemanticIndexDeps {
  store: Store;
  events: EngineEvents;
  route(platformId: string): ModelRoute;
}

/**
 * Semantic recall (docs/entities-and-memory.md#embeddings-semantic-recall): the vectors of an entity's messages,
 * from the embedding model its route opted in to, and the ranking of them by a question. A route
 * without embeddings has no index: recall ranks by words alone, as it always did.
 *
 * Messages are embedded after their turn commits, in the background (never on a turn's way to its
 * reply), a bounded pass at a time; a recall also starts a pass, so an entity whose messages came
 * before the route opted in (or before its model changed) is embedded as it is used. A provider
 * that fails leaves recall to the words and is counted (the embeddings metric), never a turn's error.
 */
export class SemanticIndex {
  private readonly models = new Map<string, Promise<EmbeddingModel | undefined>>();
  /** Per entity: the pass running now, and whether another is due when it ends. */
  private readonly passes = new Map<string, { done: Promise<void>; again: boolean }>();
  private readonly held: VectorCache;

  constructor(private readonly deps: SemanticIndexDeps) {
    this.held = new VectorCache(deps.store.vectors);
  }

  /** The embedding model of a platform id's route, or undefined; a malformed `embeddings` setting is a ConfigError. */
  model(platformId: string): Promise<EmbeddingModel | undefined> {
    let m = this.models.get(platformId);
    if (!m) {
      m = (async () => {
        const route = this.deps.route(platformId);
        checkEmbeddingRoute(platformId, route);
        return createEmbeddingModel(route);
      })();
      this.models.set(platformId, m);
    }
    return m;
  }

  /**
   * The `limit` messages before `beforeSeq` nearest the question in meaning, most similar first;
   * undefined when the entity's route has no embeddings or the provider failed to embed the question.
   */
  async rank(entity: EntityRow, question: string, beforeSeq: number | undefined, limit: number): Promise<RankedSeq[] | undefined> {
    const model = await this.model(entity.model);
    if (!model) return undefined;
    this.refresh(entity);
    let query: Float32Array;
    try {
      [query] = await model.embed([embeddable(question)]);
    } catch {
      this.deps.events.embeddings('failed', 1);
      return undefined;
    }
    return rankByVector(query, await this.held.vectors(entity.id, model.name), limit, beforeSeq);
  }

  /** Embeds the entity's messages that have no vector yet, in the background; one pass per entity at a time. */
  refresh(entity: EntityRow): void {
    const running = this.passes.get(entity.id);
    if (running) {
      running.again = true;
      return;
    }
    const pass = { done: Promise.resolve(), again: false };
    this.passes.set(entity.id, pass);
    pass.done = (async () => {
      // Started after the caller's own work: a committed turn sends its reply first.
      await new Promise((r) => setImmediate(r));
      do {
        pass.again = false;
        await this.pass(entity);
      } while (pass.again);
      this.passes.delete(entity.id);
    })();
  }

  /** Resolves once no pass is running (the engine waits for them before it closes its store). */
  async drain(): Promise<void> {
    while (this.passes.size) await Promise.allSettled([...this.passes.values()].map((p) => p.done));
  }

  /** One bounded pass: the newest messages without a vector, embedded a batch at a time and stored. */
  private async pass(entity: EntityRow): Promise<void> {
    let model: EmbeddingModel | undefined;
    let todo: UnembeddedMessage[];
    try {
      model = await this.model(entity.model);
      if (!model) return;
      todo = await this.deps.store.vectors.unembedded(entity.id, model.name, PASS_MESSAGES);
    } catch {
      // A malformed route is the turn's to report; a store that failed is the next pass's to retry.
      return;
    }
    for (let at = 0; at < todo.length; at += BATCH) {
      const batch = todo.slice(at, at + BATCH);
      try {
        const vectors = await model.embed(batch.map((m) => embeddable(m.content)));
        const rows = batch.map((m, i) => ({ seq: m.seq, vector: vectors[i] }));
        await this.deps.store.vectors.put(entity.id, model.name, rows);
        this.held.added(entity.id, model.name, rows);
        this.deps.events.embeddings('stored', batch.length);
      } catch {
        this.deps.events.embeddings('failed', batch.length);
        return;
      }
    }
  }
}

/**
 * The most of a message that is embedded, in characters: the head of a long message says what it
 * is about, and a longer input fails on servers with a small batch (llama-server embeds at most its
 * `-ub`, 512 tokens by default, at once).
 */
export const EMBED_MAX_CHARS = 1500;

/** The most messages one pass embeds: a turn's two, or a bounded part of an older transcript. */
const PASS_MESSAGES = 256;
/** Texts per embeddings request. */
const BATCH = 32;

/** A message's text as it is embedded: its head, and a space for an empty one (servers refuse an empty input). */
function embeddable(text: string): string {
  if (!text.trim()) return ' ';
  return text.length > EMBED_MAX_CHARS ? text.slice(0, EMBED_MAX_CHARS) : text;
}
