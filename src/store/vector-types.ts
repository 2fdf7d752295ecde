/** Semantic recall's vectors: one per transcript message, from the model its entity's route names. */

/** A message's vector. */
export interface MessageVector {
  seq: number;
  vector: Float32Array;
}

/** A message without a vector from the model asked about: its text, to embed. */
export interface UnembeddedMessage {
  seq: number;
  content: string;
}

/**
 * Vectors keyed by (entity, seq), with the name of the model that made them: a message keeps one
 * vector, so a route that changes its model embeds its messages again (each put replaces the old
 * model's vector) and never compares vectors of two models. An entity's deletion takes its vectors.
 */
export interface VectorStore {
  /** The entity's messages with no vector from `model` (none, or another model's), newest first, at most `limit`. */
  unembedded(entityId: string, model: string, limit: number): Promise<UnembeddedMessage[]>;
  /** Stores the vectors as `model`'s, replacing what those messages had; a message (or entity) gone meanwhile is skipped. */
  put(entityId: string, model: string, vectors: readonly MessageVector[]): Promise<void>;
  /** The entity's vectors from `model`, of its messages before `beforeSeq` (all when undefined), in seq order. */
  vectors(entityId: string, model: string, beforeSeq: number | undefined): Promise<MessageVector[]>;
  /** How many vectors the entity has from `model`: whether a copy read before is still whole (vectors are only added or replaced). */
  count(entityId: string, model: string): Promise<number>;
}

/** A vector as stored: its float32s' bytes (little-endian, as every platform mgpt runs on). */
export function vectorBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/**
 * A stored vector back: a view of the driver's bytes where they are aligned for float32s, else a
 * copy (one memcpy; a recall reads every vector of the entity, so nothing per element here).
 */
export function bytesVector(b: Uint8Array): Float32Array {
  if (b.byteOffset % 4 === 0) return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
  const copy = new Uint8Array(b.byteLength);
  copy.set(b);
  return new Float32Array(copy.buffer);
}
