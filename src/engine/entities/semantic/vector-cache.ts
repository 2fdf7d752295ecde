import type { MessageVector, VectorStore } from '../../../store/types.js';
import { unit } from './vector-rank.js';

/** One entity's vectors from one model, as unit vectors (a cosine is then a dot product). */
interface Held {
  model: string;
  bySeq: Map<number, Float32Array>;
  floats: number;
}

/**
 * The vectors of the entities recalled lately, held in memory: a recall compares the question with
 * every vector of its entity, and reading them all from the store took most of a recall at the
 * transcript cap (20,000 messages of 768 floats: 300-500 ms of reading against 70 ms of
 * comparing). A held copy is used while the store has as many vectors from the model as it holds
 * (vectors are only added, or replaced by another model's), so another process's writes are seen;
 * this process's own writes are added to it. At most MAX_FLOATS are held, the least recent entity
 * dropped first.
 */
export class VectorCache {
  private readonly held = new Map<string, Held>();
  private floats = 0;

  constructor(private readonly store: VectorStore) {}

  /** The entity's vectors from `model` (unit length), from memory when the store has no others. */
  async vectors(entityId: string, model: string): Promise<MessageVector[]> {
    let h = this.held.get(entityId);
    if (!h || h.model !== model || h.bySeq.size !== (await this.store.count(entityId, model))) {
      const rows = await this.store.vectors(entityId, model, undefined);
      h = { model, bySeq: new Map(rows.map((r) => [r.seq, unit(r.vector)])), floats: 0 };
      this.hold(entityId, h);
    } else {
      // Most recently used last: the first entry is the one to drop.
      this.held.delete(entityId);
      this.held.set(entityId, h);
    }
    return [...h.bySeq].map(([seq, vector]) => ({ seq, vector }));
  }

  /** Vectors this process just stored: a held copy of the same model takes them. */
  added(entityId: string, model: string, vectors: readonly MessageVector[]): void {
    const h = this.held.get(entityId);
    if (!h || h.model !== model) return;
    for (const v of vectors) h.bySeq.set(v.seq, unit(v.vector));
    this.resize(entityId, h);
  }

  private hold(entityId: string, h: Held): void {
    this.drop(entityId);
    this.held.set(entityId, h);
    this.resize(entityId, h);
  }

  private resize(entityId: string, h: Held): void {
    let floats = 0;
    for (const v of h.bySeq.values()) floats += v.length;
    this.floats += floats - h.floats;
    h.floats = floats;
    for (const first of this.held.keys()) {
      if (this.floats <= MAX_FLOATS) break;
      this.drop(first);
      if (first === entityId) break;
    }
  }

  private drop(entityId: string): void {
    const h = this.held.get(entityId);
    if (!h) return;
    this.floats -= h.floats;
    this.held.delete(entityId);
  }
}

/** 64 MB of float32s: a few entities at the transcript cap with a large model's vectors. */
const MAX_FLOATS = 16 * 1024 * 1024;
