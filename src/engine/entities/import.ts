import {
  ENTITY_MODEL,
  IMPORT_MAX_BYTES,
  importTooLarge,
  type ExportFormat,
  type ExportManifest,
  type TranscriptMessage,
  type WindowBlock,
} from '../../core/wire/entity-types.js';
import { BadRequestError, ConflictError } from '../../core/errors.js';
import { readTar } from '../../core/archive/tar.js';
import { loadTokenEstimator, type TokenEstimator } from '../../core/text/tokens.js';
import { checkWindowInvariant } from '../../core/window-plan.js';
import type { EntityRow, ImportConflict } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { sha256 } from '../../core/hash.js';
import type { ImportOptions, ImportedEntity } from '../../core/backend.js';
import { freeName, refuseTakenName } from './entity-names.js';
import { checkBudget, checkMemoryTool, checkName, checkRecall, checkRecallTokens, recallCode } from './entity-rules.js';
import { toEntity, windowDocument } from './entity-wire.js';
import { ARCHIVE_PARTS, EXPORT_FILES, partMember } from './export.js';
import { HISTORY_FILE, historyOf } from './archive-history.js';
import { MEMORY_FILE, memoryOf } from './memory-archive.js';

/** What an import reads: the store and ids. */
type ImportDeps = Pick<EngineDeps, 'store' | 'newId' | 'limits'>;

const dec = new TextDecoder('utf-8', { fatal: true });

interface ImportFiles {
  manifest: unknown;
  transcript: unknown;
  window: unknown;
  transcriptSha: string;
  windowSha: string;
  /** A version 2 archive's further parts, by file name: the parsed value and the sha256 of its bytes. */
  parts: Map<string, { value: unknown; sha: string }>;
}

/**
 * Recreates an exported entity: same transcript and window, a new id unless `keepId`. Everything
 * is verified (archive layout, sha256 values, seqs, alternating roles, message blocks against the
 * transcript, the window invariant) before one transaction writes it; any problem is a clear error
 * and nothing is written. The sha256 values only catch accidents (whoever edits a file can rehash
 * it), so token counts are recounted with the engine's estimator, never taken from the archive.
 */
export async function importEntity(
  deps: ImportDeps,
  bytes: Uint8Array,
  format: ExportFormat,
  opts: ImportOptions,
  accountId: string,
): Promise<ImportedEntity> {
  if (bytes.length > IMPORT_MAX_BYTES) throw importTooLarge();
  const files = format === 'tar' ? fromTar(bytes) : fromJson(bytes);
  const manifest = checkManifest(files.manifest);
  checkHashes(files, manifest);
  const archived = checkTranscript(files.transcript, manifest);
  const archivedWindow = checkWindow(files.window, manifest, archived);
  const tok = await loadTokenEstimator();
  const messages = archived.map((m) => ({ ...m, tokens: tok.count(m.content) }));
  const blocks = archivedWindow.map((b) => ({ ...b, tokens: tok.count(b.content) }));
  const id = opts.keepId ? manifest.entity.id : deps.newId();
  // Block ids are global; a copy next to its original needs fresh ones.
  const blockIds = opts.keepId ? blocks.map((b) => b.id) : blocks.map(() => deps.newId());
  const name = await importName(deps, opts, manifest.entity.name, accountId);
  const row: EntityRow = {
    id,
    accountId,
    name,
    instructions: manifest.entity.instructions,
    instructionsTokens: tok.count(manifest.entity.instructions),
    model: manifest.entity.model,
    state: manifest.entity.state,
    budgetTokens: manifest.window.budget_tokens,
    capTokens: manifest.transcript.cap_tokens,
    transcriptMessages: messages.length,
    transcriptTokens: sumTokens(messages),
    windowTokens: sumTokens(blocks),
    windowBlocks: blocks.length,
    ...archivedRecall(manifest),
    createdAt: manifest.entity.created_at,
    updatedAt: manifest.entity.updated_at,
  };
  const taken = await deps.store.entities.importEntity({
    entity: row,
    messages: messages.map((m) => ({ seq: m.seq, role: m.role, content: m.content, tokens: m.tokens, createdAt: m.created_at })),
    blocks: blocks.map((b, i) => ({
      id: blockIds[i],
      position: i + 1,
      kind: b.kind,
      role: b.role,
      content: b.content,
      tokens: b.tokens,
      coversFrom: b.covers[0],
      coversTo: b.covers[1],
    })),
    // `--keep-id` restores ids as they were; the store checks they are free inside the write.
    keepIds: opts.keepId === true,
    history: historyIn(deps, files, archived.length, opts.keepId === true ? undefined : { window: archivedWindow, blockIds }),
    memory: memoryIn(deps, files, tok),
  });
  if (taken) idTaken(taken);
  const entity = toEntity(row, true, deps.limits.recallTokens);
  return name === manifest.entity.name || opts.name !== undefined ? entity : { ...entity, renamedFrom: manifest.entity.name };
}

/**
 * The archive's recall mode (an archive from before modes has none, and true is the
 * tool) and bound (an archive from before it, or without one set, takes this engine's default).
 */
function archivedRecall(manifest: ExportManifest): Pick<EntityRow, 'recall' | 'recallTokens' | 'memoryTool'> {
  return {
    recall: recallCode(manifest.entity.recall === undefined ? 'off' : checkRecall(manifest.entity.recall)),
    recallTokens: manifest.entity.recall_tokens ?? null,
    memoryTool: manifest.entity.memory_tool === true ? 1 : 0,
  };
}

/**
 * The copy's name: `--name` as given, or the archive's. With unique names (the CLI), a given
 * name that is taken is refused and a taken archive name is numbered: `ada (2)`, `ada (3)`…
 * (the result then carries `renamedFrom`, so the CLI can say so).
 */
async function importName(deps: ImportDeps, opts: ImportOptions, archived: string, accountId: string): Promise<string> {
  if (opts.name !== undefined) {
    const name = checkName(opts.name);
    if (opts.uniqueName) await refuseTakenName(deps.store, accountId, name);
    return name;
  }
  return opts.uniqueName ? freeName(deps.store, accountId, archived) : archived;
}

/** The archive's window history (version 2), with the copy's block ids: the window's new ones, and new ones for the rest. */
function historyIn(deps: ImportDeps, files: ImportFiles, messages: number, renamed?: { window: WindowBlock[]; blockIds: string[] }) {
  const part = files.parts.get(HISTORY_FILE);
  if (!part) return undefined;
  if (!renamed) return historyOf(part.value, messages, (id) => id);
  const ids = new Map(renamed.window.map((b, i) => [b.id, renamed.blockIds[i]]));
  return historyOf(part.value, messages, (id) => (ids.has(id) ? ids.get(id)! : ids.set(id, deps.newId()).get(id)!));
}

/** The archive's pinned memory (version 2), checked against this engine's limits; labels belong to the entity, so a copy keeps them. */
function memoryIn(deps: ImportDeps, files: ImportFiles, tok: TokenEstimator) {
  const part = files.parts.get(MEMORY_FILE);
  return part && memoryOf(part.value, deps.limits.memory, tok);
}

/** Each file is what the manifest says; version 1 holds the three alone, version 2 names each further part with its sha256. */
function checkHashes(files: ImportFiles, manifest: ExportManifest): void {
  if (files.transcriptSha !== manifest.transcript.sha256) fail('transcript sha256 does not match the manifest');
  if (files.windowSha !== manifest.window.sha256) fail('window sha256 does not match the manifest');
  const named = manifest.version === 2 ? manifest.parts : undefined;
  if (manifest.version === 2 && (typeof named !== 'object' || named === null || Array.isArray(named))) fail('manifest parts are missing');
  for (const [file, part] of files.parts) {
    const sha = named?.[file]?.sha256;
    if (sha === undefined) fail(`${file} is not named in the manifest`);
    if (sha !== part.sha) fail(`${file} sha256 does not match the manifest`);
  }
  for (const file of Object.keys(named ?? {})) {
    if (!ARCHIVE_PARTS.some((p) => p.file === file)) fail(`unknown part ${JSON.stringify(file)} (from a newer mgpt?)`);
    if (!files.parts.has(file)) fail(`archive has no ${file}`);
  }
}

/** An id `--keep-id` wanted is already taken: a conflict. */
function idTaken(taken: NonNullable<ImportConflict>): never {
  const hint = 'import without --keep-id to get new ids';
  const what = taken.taken === 'entity' ? 'an entity' : 'a window block';
  throw new ConflictError(`${what} with id ${taken.id} already exists`, { hint, code: 'already_exists' });
}

function sumTokens(items: ReadonlyArray<{ tokens: number }>): number {
  return items.reduce((n, x) => n + x.tokens, 0);
}

function fromTar(bytes: Uint8Array): ImportFiles {
  let entries;
  try {
    entries = readTar(bytes);
  } catch (err) {
    fail(`not a valid export archive: ${(err as Error).message}`);
  }
  const byName = new Map<string, Uint8Array>();
  const known = [...EXPORT_FILES, ...ARCHIVE_PARTS.map((p) => p.file)];
  for (const e of entries) {
    if (!known.includes(e.name)) fail(`unexpected archive entry ${JSON.stringify(e.name)}`);
    if (byName.has(e.name)) fail(`archive holds ${e.name} twice`);
    byName.set(e.name, e.body);
  }
  for (const name of EXPORT_FILES) if (!byName.has(name)) fail(`archive has no ${name}`);
  const transcript = byName.get('transcript.json')!;
  const window = byName.get('window.json')!;
  return {
    manifest: parse(byName.get('manifest.json')!, 'manifest.json'),
    transcript: parse(transcript, 'transcript.json'),
    window: parse(window, 'window.json'),
    transcriptSha: sha256(transcript),
    windowSha: sha256(window),
    parts: new Map(ARCHIVE_PARTS.filter((p) => byName.has(p.file)).map((p) => [p.file, { value: parse(byName.get(p.file)!, p.file), sha: sha256(byName.get(p.file)!) }])),
  };
}

function fromJson(bytes: Uint8Array): ImportFiles {
  const doc = parse(bytes, 'the export file');
  if (!isObject(doc) || !('manifest' in doc) || !('transcript' in doc)) fail('a JSON export holds manifest and transcript');
  if (!('window' in doc)) fail('this JSON export has no window; import the tar export instead');
  if (!Array.isArray(doc.transcript)) fail('transcript must be an array');
  const w = doc.window;
  if (!isObject(w) || !Array.isArray(w.blocks)) fail('window must be an object with blocks');
  // Hash the canonical serialization: the same bytes the exporter hashed.
  const transcriptText = '[' + (doc.transcript as unknown[]).map((m) => JSON.stringify(canonicalMessage(m))).join(',') + ']';
  const windowText = windowDocument(w.budget_tokens as number, w.tokens as number, (w.blocks as unknown[]).map(canonicalBlock));
  return {
    manifest: doc.manifest,
    transcript: doc.transcript,
    window: w,
    transcriptSha: sha256(transcriptText),
    windowSha: sha256(windowText),
    // A part's bytes are its JSON as the exporter wrote it (JSON.stringify, no spaces).
    parts: new Map(ARCHIVE_PARTS.filter((p) => partMember(p.file) in doc).map((p) => {
      const value = (doc as Record<string, unknown>)[partMember(p.file)];
      return [p.file, { value, sha: sha256(JSON.stringify(value)) }];
    })),
  };
}

function checkManifest(m: unknown): ExportManifest {
  if (!isObject(m) || m.format !== 'mgpt-entity') fail('manifest format is not mgpt-entity');
  if (m.version !== 1 && m.version !== 2) fail(`manifest version ${JSON.stringify(m.version)} is not supported (expected 1 or 2)`);
  const e = m.entity;
  if (!isObject(e) || typeof e.id !== 'string' || typeof e.name !== 'string' || typeof e.instructions !== 'string') {
    fail('manifest entity is incomplete');
  }
  if (e.model !== ENTITY_MODEL) fail(`manifest model ${JSON.stringify(e.model)} is not ${ENTITY_MODEL}`);
  // The rules create and update apply: an archive cannot bring in a name or budget they refuse.
  sameRule(() => checkName(e.name), 'manifest entity.');
  const mw = m.window;
  if (isObject(mw)) sameRule(() => checkBudget(mw.budget_tokens), 'manifest window.');
  if (e.recall_tokens !== undefined) sameRule(() => checkRecallTokens(e.recall_tokens, isObject(mw) && isCount(mw.budget_tokens) ? mw.budget_tokens : 0), 'manifest entity.');
  for (const f of ['state', 'created_at', 'updated_at']) if (typeof e[f] !== 'string') fail(`manifest entity.${f} is missing`);
  if (e.recall !== undefined) sameRule(() => checkRecall(e.recall), 'manifest entity.');
  if (e.memory_tool !== undefined) sameRule(() => checkMemoryTool(e.memory_tool), 'manifest entity.');
  const t = m.transcript;
  const w = m.window;
  if (!isObject(t) || !isCount(t.messages) || !isCount(t.tokens) || !isCount(t.cap_tokens) || typeof t.sha256 !== 'string') {
    fail('manifest transcript is incomplete');
  }
  if (!isObject(w) || !isCount(w.budget_tokens) || !isCount(w.tokens) || !isCount(w.blocks) || typeof w.sha256 !== 'string') {
    fail('manifest window is incomplete');
  }
  if ((w.budget_tokens as number) < 1 || (t.cap_tokens as number) < 1) fail('manifest budget and cap must be positive');
  return m as unknown as ExportManifest;
}

function checkTranscript(t: unknown, manifest: ExportManifest): TranscriptMessage[] {
  if (!Array.isArray(t)) fail('transcript.json is not an array');
  let tokens = 0;
  const out = t.map((raw, i) => {
    const m = canonicalMessage(raw);
    if (m.seq !== i + 1) fail(`transcript message ${i + 1} has seq ${JSON.stringify(m.seq)}`);
    // Turns are stored whole: user, assistant, user, assistant...
    const role = i % 2 === 0 ? 'user' : 'assistant';
    if (m.role !== role) fail(`transcript message ${m.seq} has role ${JSON.stringify(m.role)}; expected ${role} (roles alternate, starting with user)`);
    if (typeof m.content !== 'string' || !isCount(m.tokens) || typeof m.created_at !== 'string') {
      fail(`transcript message ${m.seq} is incomplete`);
    }
    tokens += m.tokens;
    return m;
  });
  if (out.length % 2 !== 0) fail('transcript ends with a user message that has no reply');
  if (out.length !== manifest.transcript.messages) fail('transcript length does not match the manifest');
  if (tokens !== manifest.transcript.tokens) fail('transcript tokens do not match the manifest');
  return out;
}

function checkWindow(w: unknown, manifest: ExportManifest, messages: TranscriptMessage[]): WindowBlock[] {
  if (!isObject(w) || !Array.isArray(w.blocks)) fail('window.json has no blocks');
  if (w.budget_tokens !== manifest.window.budget_tokens) fail('window budget does not match the manifest');
  const blocks = (w.blocks as unknown[]).map(canonicalBlock);
  let tokens = 0;
  for (const b of blocks) {
    if (typeof b.id !== 'string' || typeof b.content !== 'string' || !isCount(b.tokens)) fail('a window block is incomplete');
    if (!Array.isArray(b.covers) || b.covers.length !== 2 || !b.covers.every(isCount)) fail('a window block has bad covers');
    const ok = b.kind === 'summary' ? b.role === 'system' : b.kind === 'message' && (b.role === 'user' || b.role === 'assistant');
    if (!ok) fail(`a window block has kind ${JSON.stringify(b.kind)} and role ${JSON.stringify(b.role)}`);
    tokens += b.tokens;
  }
  const broken = checkWindowInvariant(blocks, messages.length);
  if (broken) fail(`window does not cover the transcript: ${broken}`);
  checkMessageBlocks(blocks, messages);
  if (new Set(blocks.map((b) => b.id)).size !== blocks.length) fail('two window blocks have the same id');
  if (tokens !== w.tokens || tokens !== manifest.window.tokens) fail('window tokens do not match');
  if (blocks.length !== manifest.window.blocks) fail('window block count does not match the manifest');
  return blocks;
}

/** A message block is a copy of the transcript message it covers: same role, same text. */
function checkMessageBlocks(blocks: WindowBlock[], messages: TranscriptMessage[]): void {
  for (const [i, b] of blocks.entries()) {
    if (b.kind !== 'message') continue;
    const m = messages[b.covers[0] - 1];
    if (b.role !== m.role || b.content !== m.content) fail(`window block ${i} differs from transcript message ${m.seq} it covers`);
  }
}

function sameRule(check: () => unknown, where: string): void {
  try {
    check();
  } catch (err) {
    fail(where + (err as Error).message);
  }
}

function canonicalMessage(raw: unknown): TranscriptMessage {
  const m = (isObject(raw) ? raw : {}) as Record<string, unknown>;
  return { seq: m.seq, role: m.role, content: m.content, tokens: m.tokens, created_at: m.created_at } as TranscriptMessage;
}

function canonicalBlock(raw: unknown): WindowBlock {
  const b = (isObject(raw) ? raw : {}) as Record<string, unknown>;
  return { id: b.id, kind: b.kind, role: b.role, content: b.content, tokens: b.tokens, covers: b.covers } as WindowBlock;
}

function parse(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(dec.decode(bytes));
  } catch (err) {
    fail(`${what} is not valid JSON: ${(err as Error).message}`);
  }
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function isCount(x: unknown): x is number {
  return Number.isSafeInteger(x) && (x as number) >= 0;
}

function fail(message: string): never {
  throw new BadRequestError(`import: ${message}`);
}
