import { needAdmin } from './chat-errors.js';
import { plural } from '../core/text/numbers.js';
import type { ChatSources, ChatTarget } from './chat-types.js';
import type { SwitchTarget } from './completion.js';

/** What `/switch` completes to: entities, or universes when the REPL is on one. */
export async function switchTargets(src: ChatSources, current: ChatTarget): Promise<SwitchTarget[]> {
  if (current.kind === 'entity') return (await src.backend.listEntities()).data.map((e) => ({ id: e.id, name: e.name }));
  return (await needAdmin(src, 'universes list').listUniverses()).map((u) => ({ id: u.id, name: u.displayName ?? '' }));
}

/** `/switch` without a ref: one line a target, and how to switch. */
export async function targetList(src: ChatSources, current: ChatTarget): Promise<string> {
  const rows =
    current.kind === 'entity'
      ? (await src.backend.listEntities()).data.map((e) => `${e.id}  ${(e.name || '-').padEnd(20)} ${plural(e.transcript.messages, 'message')}`)
      : (await needAdmin(src, 'universes list').listUniverses()).map((u) => `${u.id}  ${(u.displayName || u.storedPrompt).padEnd(20)} ${plural(u.messages, 'message')}`);
  return [...rows, 'switch with /switch ID (or an entity name)'].join('\n');
}

/** `/switch REF`: a target of the same kind as the current one. */
export async function resolveTarget(src: ChatSources, current: ChatTarget, ref: string): Promise<ChatTarget> {
  if (current.kind === 'entity') return { kind: 'entity', id: (await src.backend.resolveEntity(ref)).id };
  return { kind: 'universe', id: await src.backend.resolveUniverse(ref) };
}

/** `/new [name]`: a new entity on the current one's model, or a universe on the current one's prompt. */
export async function createTarget(src: ChatSources, current: ChatTarget, name: string, instructions?: string): Promise<ChatTarget> {
  if (current.kind === 'universe') {
    const u = await needAdmin(src, 'universes show').getUniverse(current.id);
    const created = await src.backend.createUniverse({ storedPrompt: u.storedPrompt, ...(name ? { displayName: name } : {}) });
    return { kind: 'universe', id: created.universe };
  }
  const e = await src.backend.getEntity(current.id);
  const created = await src.backend.createEntity({ model: e.model, ...(name ? { name } : {}), ...(instructions ? { instructions } : {}) });
  return { kind: 'entity', id: created.id };
}
