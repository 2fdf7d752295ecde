import type { RotateResult } from '../core/wire/rotation-types.js';
import type { ChatItem, ChatSources, ChatTarget } from './chat-types.js';

/** What a steering command shows: an item without its id. */
type Shown = Extract<ChatItem, { kind: 'output' } | { kind: 'error' }> extends infer T ? (T extends ChatItem ? Omit<T, 'id'> : never) : never;

/** The steering commands of the REPL, each a thin call of the Backend the CLI's own verbs call. */
export const STEER_COMMANDS: [usage: string, what: string][] = [
  ['/memory [LABEL [TEXT]]', 'pinned memory: list the blocks, show one, or set it (as mgpt memory set)'],
  ['/memory rm LABEL', 'remove a pinned memory block'],
  ['/instructions [TEXT]', "show the entity's instructions, or replace them from the next turn"],
  ['/model [ALIAS]', "show who answers; in a universe, switch the model alias for the next turns"],
  ['/rotate', 'fold the oldest live messages into a summary now (as mgpt rotate)'],
  ['/undo', 'undo the newest rotation: its messages come back live (as mgpt rotate --undo)'],
  ['/retry', 'send again the last message whose turn failed or was cancelled (nothing of it was stored)'],
];

const intText = (n: number): string => n.toLocaleString('en-US');

const ENTITY_ONLY = (name: string): Shown => ({ kind: 'error', text: `/${name} is for entities; this is a universe`, hint: 'switch to an entity with /switch', exitCode: 2 });

/** `/memory`, `/memory LABEL`, `/memory LABEL TEXT`, `/memory rm LABEL`. */
export async function memoryItem(src: ChatSources, target: ChatTarget, arg: string): Promise<Shown> {
  if (target.kind !== 'entity') return ENTITY_ONLY('memory');
  const [, label, text = ''] = /^(\S*)\s*([\s\S]*)$/.exec(arg.trim()) ?? [];
  if (!label) return memoryList(src, target.id);
  if (label === 'rm') {
    if (!/^\S+$/.test(text)) return { kind: 'error', text: '/memory rm takes one label: /memory rm preferences', exitCode: 2 };
    await src.backend.deleteMemory(target.id, text);
    return { kind: 'output', text: `removed memory block ${text}; the next turn's prompt no longer holds it` };
  }
  if (!text) {
    const block = await src.backend.getMemory(target.id, label);
    return { kind: 'output', text: `${block.label} (${intText(block.tokens)} tokens)\n${block.text}` };
  }
  const block = await src.backend.setMemory(target.id, label, text);
  return { kind: 'output', text: `set memory block ${block.label} (${intText(block.tokens)} tokens); the next turn's prompt holds it` };
}

async function memoryList(src: ChatSources, id: string): Promise<Shown> {
  const m = await src.backend.listMemory(id);
  if (m.memory.length === 0) return { kind: 'output', text: `no pinned memory (up to ${m.limits.blocks} blocks, ${intText(m.limits.tokens)} tokens): /memory LABEL TEXT sets one` };
  const lines = m.memory.map((b) => `${b.label.padEnd(16)} ${intText(b.tokens).padStart(6)} tok  ${oneLine(b.text)}`);
  return { kind: 'output', text: [`pinned memory: ${intText(m.tokens)} of ${intText(m.limits.tokens)} tokens in ${m.memory.length} of ${m.limits.blocks} blocks`, ...lines].join('\n') };
}

/** `/instructions` shows them; `/instructions TEXT` replaces them (the next turn uses the new ones). */
export async function instructionsItem(src: ChatSources, target: ChatTarget, arg: string): Promise<Shown> {
  if (target.kind !== 'entity') return ENTITY_ONLY('instructions');
  if (!arg) {
    const e = await src.backend.getEntity(target.id);
    return { kind: 'output', text: e.instructions ? e.instructions : '(no instructions)' };
  }
  await src.backend.updateEntity(target.id, { instructions: arg });
  return { kind: 'output', text: 'instructions replaced; the next turn uses them' };
}

/** `/rotate` and `/undo`: the rotation verbs of `mgpt rotate`, said the same way. */
export async function rotateItem(src: ChatSources, target: ChatTarget, action: 'rotate' | 'undo', signal?: AbortSignal): Promise<Shown> {
  if (target.kind !== 'entity') return ENTITY_ONLY(action);
  return { kind: 'output', text: rotateSaid(await src.backend.rotate(target.id, { action }, { signal })) };
}

/** One line for what a steering action did (`mgpt rotate` prints the same). */
export function rotateSaid(r: RotateResult): string {
  const { rotation: rot, window } = r;
  const now = `window now ${window.blocks.length} blocks, ${intText(window.tokens)} tokens`;
  if (r.action === 'undo') return `undone: the rotation that folded seqs ${rot.from_seq}-${rot.to_seq}; ${now}`;
  const by = `${rot.route.provider}:${rot.route.model}`;
  if (r.action === 'resummarize') return `summary of seqs ${rot.from_seq}-${rot.to_seq} written again by ${by} (${intText(rot.summary.tokens)} tokens); ${now}`;
  return `folded seqs ${rot.from_seq}-${rot.to_seq} into a summary of ${intText(rot.summary.tokens)} tokens (${by}); ${now}`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}
