import { recallModeOf } from './entity-rules.js';
import { createHash } from 'node:crypto';
import type { ExportFormat, ExportManifest } from '../../core/wire/entity-types.js';
import { tarHeader, tarPadding, tarTrailer } from '../../core/archive/tar.js';
import type { EntityRow, EntitySnapshot } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { toBlock, toMessage, windowDocument } from './entity-wire.js';
import { HISTORY_FILE, historyDocument } from './archive-history.js';
import { MEMORY_FILE, memoryDocument } from './memory-archive.js';

/** What an export reads: the store, the clock and the engine's version. */
type ExportDeps = Pick<EngineDeps, 'store' | 'clock' | 'version'>;

const PAGE = 500;
const enc = new TextEncoder();

export const EXPORT_FILES = ['manifest.json', 'transcript.json', 'window.json'] as const;

/** A part of a version 2 archive after the window: a tar file, and the JSON export's member named after it. */
export interface ArchivePart {
  file: string;
  bytes: Uint8Array;
}

/** The parts a version 2 archive may hold, in the order they are written; a new part is one more entry. */
export const ARCHIVE_PARTS: ReadonlyArray<{ file: string; of(snapshot: EntitySnapshot): string }> = [
  { file: HISTORY_FILE, of: (s) => historyDocument(s.history) },
  { file: MEMORY_FILE, of: (s) => memoryDocument(s.memory) },
];

/** The JSON export's member for a part: its file name without `.json`. */
export const partMember = (file: string): string => file.replace(/\.json$/, '');

/**
 * Streams an entity's export from a snapshot of its head and window (read together, in one read
 * transaction, by the caller). The transcript is read twice in keyset pages (once to hash and size
 * it for the manifest and the tar header, once to emit it), so memory does not grow with it. The
 * transcript is append-only, so bounding both passes by the message count seen at the start makes
 * them agree even while new turns land.
 */
export async function* exportEntity(
  deps: ExportDeps,
  snapshot: EntitySnapshot,
  format: ExportFormat,
): AsyncGenerator<Uint8Array> {
  const { entity } = snapshot;
  const parts: ArchivePart[] = ARCHIVE_PARTS.map((p) => ({ file: p.file, bytes: enc.encode(p.of(snapshot)) }));
  const maxSeq = entity.transcriptMessages;
  const windowJson = enc.encode(windowDocument(entity.budgetTokens, entity.windowTokens, snapshot.window.map(toBlock)));
  const hash = createHash('sha256');
  let size = 0;
  for await (const piece of transcriptPieces(deps, entity.id, maxSeq)) {
    hash.update(piece);
    size += piece.length;
  }
  const manifestJson = enc.encode(JSON.stringify(manifestOf(deps, entity, hash.digest('hex'), windowJson, parts), null, 2));
  const transcript = () => emitTranscript(deps, entity.id, maxSeq, size);
  if (format === 'json') {
    // A superset of the seed's `{ manifest, transcript }`: the window rides along so an import restores it.
    yield enc.encode(`{"manifest":`);
    yield manifestJson;
    yield enc.encode(`,"transcript":`);
    yield* transcript();
    yield enc.encode(`,"window":`);
    yield windowJson;
    for (const p of parts) {
      yield enc.encode(`,${JSON.stringify(partMember(p.file))}:`);
      yield p.bytes;
    }
    yield enc.encode('}\n');
    return;
  }
  const mtime = Math.floor(deps.clock.now() / 1000);
  yield* tarFile('manifest.json', manifestJson, mtime);
  yield tarHeader('transcript.json', size, mtime);
  yield* transcript();
  yield tarPadding(size);
  yield* tarFile('window.json', windowJson, mtime);
  for (const p of parts) yield* tarFile(p.file, p.bytes, mtime);
  yield tarTrailer();
}

function* tarFile(name: string, bytes: Uint8Array, mtime: number): Generator<Uint8Array> {
  yield tarHeader(name, bytes.length, mtime);
  yield bytes;
  yield tarPadding(bytes.length);
}

function manifestOf(deps: ExportDeps, entity: EntityRow, transcriptSha256: string, windowJson: Uint8Array, parts: ArchivePart[]): ExportManifest {
  return {
    format: 'mgpt-entity',
    version: 2,
    entity: {
      id: entity.id,
      name: entity.name,
      instructions: entity.instructions,
      model: entity.model,
      state: entity.state,
      ...(entity.recall ? { recall: recallModeOf(entity.recall) as 'tool' | 'auto' } : {}),
      ...(entity.recallTokens ? { recall_tokens: entity.recallTokens } : {}),
      ...(entity.memoryTool ? { memory_tool: true as const } : {}),
      created_at: entity.createdAt,
      updated_at: entity.updatedAt,
    },
    transcript: { messages: entity.transcriptMessages, tokens: entity.transcriptTokens, cap_tokens: entity.capTokens, sha256: transcriptSha256 },
    window: {
      budget_tokens: entity.budgetTokens,
      tokens: entity.windowTokens,
      blocks: entity.windowBlocks,
      sha256: createHash('sha256').update(windowJson).digest('hex'),
    },
    exported_at: deps.clock.iso(),
    exporter: `mgpt/${deps.version}`,
    parts: Object.fromEntries(parts.map((p) => [p.file, { sha256: createHash('sha256').update(p.bytes).digest('hex') }])),
  };
}

async function* emitTranscript(deps: ExportDeps, entityId: string, maxSeq: number, size: number): AsyncGenerator<Uint8Array> {
  let emitted = 0;
  for await (const piece of transcriptPieces(deps, entityId, maxSeq)) {
    emitted += piece.length;
    yield piece;
    // Let the event loop breathe (and the consumer drain) between pages.
    await new Promise<void>((r) => setImmediate(r));
  }
  if (emitted !== size) throw new Error('the transcript changed during export (was the entity deleted?)');
}

/** `transcript.json` as byte pieces: `[` messages joined by `,` `]`, one piece per page. */
async function* transcriptPieces(deps: ExportDeps, entityId: string, maxSeq: number): AsyncGenerator<Uint8Array> {
  let after = 0;
  let first = true;
  yield enc.encode('[');
  while (after < maxSeq) {
    const rows = await deps.store.entities.messagesUpTo(entityId, after, maxSeq, PAGE);
    if (rows.length === 0) break;
    let text = '';
    for (const r of rows) {
      text += (first ? '' : ',') + JSON.stringify(toMessage(r));
      first = false;
    }
    after = rows[rows.length - 1].seq;
    yield enc.encode(text);
  }
  yield enc.encode(']');
}
