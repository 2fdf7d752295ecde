import type { RotationRecord } from '../core/wire/rotation-types.js';
import type { ChatItem, ChatSources, ChatTarget } from './chat-types.js';

/** What a slash command shows: an item without its id. */
type Shown = Extract<ChatItem, { kind: 'output' } | { kind: 'error' }> extends infer T ? (T extends ChatItem ? Omit<T, 'id'> : never) : never;

/** `/rotations`: this entity's rotations, oldest first: why, what was folded, the summary's size and model, undone or not. */
export async function rotationsItem(src: ChatSources, target: ChatTarget, when?: (iso: string) => string): Promise<Shown> {
  if (target.kind === 'universe') return { kind: 'error', text: "/rotations is for entities: a universe's window is its last 64 messages", exitCode: 2 };
  const { rotations } = await src.backend.listRotations(target.id);
  if (!rotations.length) return { kind: 'output', text: '(no rotations yet: the window has never been folded; mgpt rotate folds it now)' };
  return { kind: 'output', text: rotations.map((r, i) => line(r, i + 1, when)).join('\n') };
}

function line(r: RotationRecord, n: number, when?: (iso: string) => string): string {
  const why = r.seq === null ? r.trigger : `${r.trigger} #${r.seq}`;
  const at = when ? ` (${when(r.created_at)})` : '';
  const undone = r.undone ? ' [undone]' : '';
  return `${n}. ${why}${at}: folded #${r.from_seq}–${r.to_seq} into ${r.summary.tokens} tok by ${r.route.model}, ${r.blocks_before.length}→${r.blocks_after.length} blocks${undone}`;
}
