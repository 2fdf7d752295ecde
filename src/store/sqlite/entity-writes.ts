import type { ChatImportWrite, EntityImport, EntityTurnWrite, ImportConflict, LeaseClaim, SteerWrite } from '../types.js';
import type { SqliteRepos } from './repos.js';

// The entity writes that run inside one transaction, on the server's connection or on the large
// write worker's (large-writer.ts): one copy of the logic for both.

/** Whether the claim's lease row is still its owner's; expiry does not matter (see LeaseRepo.isOwned). */
export function owns(r: SqliteRepos, lease: LeaseClaim): boolean {
  return r.leases.isOwned(lease.subject, lease.owner);
}

/** A turn's unit of work (see EntityStore.commitTurn); call it inside a transaction. */
export function commitTurn(r: SqliteRepos, w: EntityTurnWrite): boolean {
  if (!owns(r, w.lease)) return false;
  // An id taken meanwhile writes nothing: the caller reports a conflict.
  if (w.create && importEntity(r, w.create)) return false;
  const e = r.entities;
  for (const m of w.messages) e.insertMessage(w.entityId, m);
  // Before the inserts: a summary takes the position of the first block it folds.
  e.deleteBlocks(w.deleteBlockIds);
  for (const b of w.insertBlocks) e.insertBlock(w.entityId, b);
  e.updateCounters(w.entityId, w.counters);
  r.accounts.charge(w.charge);
  if (w.idempotency) r.idempotency.insert(w.entityId, w.idempotency.key, w.idempotency.row, w.idempotency.createdAt);
  if (w.log) r.logs.insert(w.log);
  if (w.rotation) r.history.insertRotation(w.rotation);
  if (w.turnWindow) r.history.insertTurnWindow(r.history.headId(w.entityId, w.turnWindow.headSha256, w.turnWindow.head), w.turnWindow);
  // The model's remember calls: one refused now (the user changed memory meanwhile) is left out.
  for (const m of w.memory ?? []) r.memory.write(m);
  r.leases.release(w.lease.subject, w.lease.owner);
  return true;
}

/** A steering action's unit of work (see HistoryStore.steer); call it inside a transaction. */
export function steer(r: SqliteRepos, w: SteerWrite): boolean {
  if (!owns(r, w.lease)) return false;
  r.entities.replaceWindow(w.entityId, w.window, w.windowTokens, w.updatedAt);
  if (w.insert) r.history.insertRotation(w.insert);
  if (w.undo !== undefined) r.history.markUndone(w.entityId, w.undo);
  r.leases.release(w.lease.subject, w.lease.owner);
  return true;
}

/** An entity with its transcript and window (see EntityStore.importEntity); call it inside a transaction. */
export function importEntity(r: SqliteRepos, i: EntityImport): ImportConflict {
  const e = r.entities;
  const id = i.entity.id;
  if (i.keepIds) {
    if (e.exists(id)) return { taken: 'entity', id };
    const taken = i.blocks.find((b) => e.blockExists(b.id));
    if (taken) return { taken: 'block', id: taken.id };
  }
  e.insert(i.entity);
  for (const m of i.messages) e.insertMessage(id, m);
  for (const b of i.blocks) e.insertBlock(id, b);
  if (i.history) r.history.importHistory(id, i.history);
  for (const b of i.memory?.blocks ?? []) r.memory.upsert(id, b);
  for (const h of i.memory?.history ?? []) r.memory.insertHistory(id, h);
  return null;
}

/** One imported conversation (see EntityStore.importChat); call it inside a transaction. */
export function importChat(r: SqliteRepos, w: ChatImportWrite): boolean {
  if (w.append && !owns(r, w.append.lease)) return false;
  if (w.create) importEntity(r, w.create);
  const a = w.append;
  if (a) {
    const e = r.entities;
    for (const m of a.messages) e.insertMessage(a.entityId, m);
    e.deleteBlocks(a.deleteBlockIds);
    for (const b of a.insertBlocks) e.insertBlock(a.entityId, b);
    e.updateCounters(a.entityId, a.counters);
  }
  if (w.rotation) r.history.replaceRotation(w.rotation);
  if (w.source) r.imports.save(w.source);
  return true;
}
