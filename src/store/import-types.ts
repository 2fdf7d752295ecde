import type { EntityHistory } from './history-rows.js';
import type { BlockRow, EntityRow, MemoryHistoryRow, MemoryRow, MessageRow } from './rows.js';

/** The rows an import writes (the Store seam's import types, re-exported by types.ts). */

/** An imported entity, written whole or not at all. */
export interface EntityImport {
  entity: EntityRow;
  messages: MessageRow[];
  blocks: BlockRow[];
  /** `--keep-id`: the ids must be free; checked inside the write. */
  keepIds: boolean;
  /** The window history an archive carried (version 2). */
  history?: EntityHistory;
  /** Pinned memory (an archive of version 2): its blocks and their history, written as they are. */
  memory?: { blocks: MemoryRow[]; history: MemoryHistoryRow[] };
}

/** Why an import with kept ids could not be written: the first id already taken. */
export type ImportConflict = { taken: 'entity' | 'block'; id: string } | null;

/**
 * Where an imported conversation went, per target: a re-run into the same target skips
 * it, `--update` appends after its last message.
 */
export interface ImportSourceRow {
  accountId: string;
  /** The tool: chatgpt, claude, openwebui. */
  source: string;
  sourceId: string;
  /** `''`: the conversation's own entity; else the id of the `--into` entity it was gathered into. */
  target: string;
  entityId: string;
  /** The tool's id of the last message imported. */
  lastMessageId: string;
  /** Messages of the tool's conversation imported so far. */
  sourceMessages: number;
  importedAt: string;
}
