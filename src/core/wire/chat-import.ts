/**
 * Importing other tools' chat exports: the options and the answer, shared by the CLI,
 * both backends and `POST /v1/imports`. See docs/importing.md.
 */

import type { Entity } from './entity-types.js';

/** The exports mgpt reads: ChatGPT's data export, Claude's data export, Open WebUI's chat export. */
export const CHAT_SOURCES = ['chatgpt', 'claude', 'openwebui'] as const;
export type ChatSource = (typeof CHAT_SOURCES)[number];

export interface ChatImportOptions {
  /** Which export this is; `auto` (the default) tells from the first conversation. */
  from?: ChatSource | 'auto';
  /** One entity (a name or id; made when there is none) that gets every conversation, in time order. */
  into?: string;
  /** Only the conversations with these source ids or titles. */
  only?: string[];
  /** Only the conversations updated on or after this date (ISO 8601). */
  since?: string;
  /** Count what would be made and write nothing. */
  dryRun?: boolean;
  /** Append what a conversation imported before gained since (otherwise it is skipped). */
  update?: boolean;
  /** The entity's model writes the summary of what does not fit the window (otherwise a plain note does). */
  summarize?: boolean;
}

/** What became of one conversation of the export. */
export type ConversationOutcome =
  | 'created' // a new entity
  | 'appended' // added to the --into entity
  | 'updated' // --update appended what was new
  | 'unchanged' // imported before, nothing new
  | 'skipped' // imported before (no --update), empty, filtered out, or changed in its past
  | 'refused' // a message over IMPORT_MESSAGE_MAX_BYTES: nothing of it is imported, the reason names the message
  | 'planned'; // --dry-run

/** The most an imported transcript message may hold, in UTF-8 bytes: what a sent message may (the server's 1 MiB body). */
export const IMPORT_MESSAGE_MAX_BYTES = 1024 * 1024;

/** The report lists this many conversations and entities at most; the rest are counted (or streamed as NDJSON). */
export const IMPORT_REPORT_ROWS = 1000;

/** The most conversations one import may hold, unless the engine is set otherwise (engine.importMaxConversations). */
export const DEFAULT_IMPORT_MAX_CONVERSATIONS = 100_000;

/** The media type that asks `POST /v1/imports` for one JSON line per conversation as it is done, then the report. */
export const IMPORT_NDJSON = 'application/x-ndjson';

export interface ImportedConversation {
  source_id: string;
  title: string;
  outcome: ConversationOutcome;
  /** Why it was skipped, when it was. */
  reason?: string;
  entity_id: string | null;
  /** Transcript messages written (or that would be). */
  messages: number;
  tokens: number;
  /** Edited or regenerated messages off the current path, left out. */
  branches_left_out: number;
  /** The seqs the conversation took in its entity. */
  seqs: [number, number] | null;
}

export interface ChatImportResult {
  object: 'import';
  source: ChatSource;
  dry_run: boolean;
  /** The first IMPORT_REPORT_ROWS entities made or added to, as GET /v1/entities/{id} shows them after the import. */
  entities: Entity[];
  /** Entities made or added to beyond those listed. */
  entities_omitted: number;
  /** The first IMPORT_REPORT_ROWS conversations of the export, in the order they were done. */
  conversations: ImportedConversation[];
  /** Conversations beyond those listed (counted in totals; NDJSON streams every one). */
  conversations_omitted: number;
  totals: ChatImportTotals;
}

export interface ChatImportTotals {
  conversations: number;
  imported: number;
  /** Every conversation not imported: skipped, unchanged and refused. */
  skipped: number;
  /** Of those, refused for a message over IMPORT_MESSAGE_MAX_BYTES. */
  refused: number;
  messages: number;
  tokens: number;
  branches_left_out: number;
}

/** Progress of a long import (the CLI shows it on stderr), told after each conversation. */
export interface ChatImportProgress {
  conversations: number;
  messages: number;
  bytes: number;
  /** What became of the conversation just done. */
  last?: ImportedConversation;
}

/** Told after each conversation; an import waits for a promise it returns (a slow NDJSON reader holds it back). */
export type ChatImportProgressHandler = (p: ChatImportProgress) => void | Promise<void>;

/** The query of `POST /v1/imports` for these options (the remote backend sends them so). */
export function importQuery(o: ChatImportOptions): URLSearchParams {
  const q = new URLSearchParams();
  if (o.from !== undefined) q.set('from', o.from);
  if (o.into !== undefined) q.set('into', o.into);
  for (const x of o.only ?? []) q.append('only', x);
  if (o.since !== undefined) q.set('since', o.since);
  if (o.dryRun) q.set('dry_run', 'true');
  if (o.update) q.set('update', 'true');
  if (o.summarize) q.set('summarize', 'true');
  return q;
}

/** The fields `POST /v1/imports` takes, as query parameters or multipart form fields. */
export const IMPORT_FIELDS = ['from', 'into', 'only', 'since', 'dry_run', 'update', 'summarize'] as const;

/** Options from a request's fields (`all(name)` gives every value of one); an unknown field is refused by the caller. */
export function importOptionsFrom(all: (name: string) => string[]): ChatImportOptions {
  const one = (n: string) => all(n).at(-1);
  const flag = (n: string) => {
    const v = one(n);
    return v === undefined ? undefined : v === 'true' || v === '1' || v === '';
  };
  const only = all('only');
  return {
    from: one('from') as ChatImportOptions['from'],
    into: one('into'),
    only: only.length ? only : undefined,
    since: one('since'),
    dryRun: flag('dry_run'),
    update: flag('update'),
    summarize: flag('summarize'),
  };
}
