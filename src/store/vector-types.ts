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
}

/** A vector as stored: its float32s' bytes (little-endian, as every platform mgpt runs on). */
export function vectorBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** A stored vector back, copied so its floats are aligned whatever offset the driver's buffer has. */
export function bytesVector(b: Uint8Array): Float32Array {
  return new Float32Array(Uint8Array.from(b).buffer);
}
