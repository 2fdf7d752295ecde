import { BadRequestError } from '../core/errors.js';
import type { Backend } from '../core/backend.js';
import type { Entity, EntityWindow } from '../core/wire/entity-types.js';
import { cursorInt, makeCursor, readCursor } from './cursor.js';

/**
 * Resources (docs/mcp.md#resources): each entity's window and each of its pinned memory blocks,
 * as text a client can attach. Listed a page of entities at a time.
 */
export const RESOURCE_TEMPLATES = [
  { uriTemplate: 'mgpt://entities/{id}/window', name: 'window', title: "An entity's window", description: 'What the entity\'s model sees now: summaries of folded messages, then the live messages.', mimeType: 'text/plain' },
  { uriTemplate: 'mgpt://entities/{id}/memory/{label}', name: 'memory', title: 'A pinned memory block', description: "One block of the entity's pinned memory, shown to its model on every turn.", mimeType: 'text/plain' },
];

const PAGE_ENTITIES = 20;
const URI = /^mgpt:\/\/entities\/([^/]+)\/(window|memory\/([^/]+))$/;

export type ResourceRef = { id: string; label?: string };

export function parseUri(uri: string): ResourceRef {
  const m = URI.exec(uri);
  if (!m) throw new BadRequestError(`no resource ${JSON.stringify(uri.slice(0, 200))}`, { hint: 'resources are mgpt://entities/ID/window and mgpt://entities/ID/memory/LABEL' });
  return m[3] === undefined ? { id: decode(m[1]!) } : { id: decode(m[1]!), label: decode(m[3]) };
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new BadRequestError(`a resource address has a bad escape: ${JSON.stringify(part.slice(0, 80))}`);
  }
}

export const windowUri = (id: string) => `mgpt://entities/${encodeURIComponent(id)}/window`;
export const memoryUri = (id: string, label: string) => `mgpt://entities/${encodeURIComponent(id)}/memory/${encodeURIComponent(label)}`;

export async function listResources(backend: Backend, cursor: string | undefined) {
  const from = cursor === undefined ? 0 : cursorInt('resources/list', readCursor('resources/list', cursor), 'at');
  const { data } = await backend.listEntities();
  const page = data.slice(from, from + PAGE_ENTITIES);
  const resources = [];
  for (const e of page) {
    resources.push({ uri: windowUri(e.id), name: `${label(e)} window`, mimeType: 'text/plain' });
    const { memory } = await backend.listMemory(e.id);
    for (const b of memory) resources.push({ uri: memoryUri(e.id, b.label), name: `${label(e)} memory ${b.label}`, mimeType: 'text/plain' });
  }
  const next = from + PAGE_ENTITIES < data.length ? makeCursor('resources/list', { at: from + PAGE_ENTITIES }) : undefined;
  return { resources, ...(next ? { nextCursor: next } : {}) };
}

function label(e: Entity): string {
  return e.name || e.id;
}

export async function readResource(backend: Backend, uri: string) {
  const ref = parseUri(uri);
  const entity = await backend.resolveEntity(ref.id);
  const text = ref.label === undefined ? windowText(entity, await backend.getWindow(entity.id)) : (await backend.getMemory(entity.id, ref.label)).text;
  return { contents: [{ uri, mimeType: 'text/plain', text }] };
}

/** The window as a model-readable page: its counts, then a line a block. */
export function windowText(entity: Entity, w: EntityWindow): string {
  const lines = w.blocks.map((b) => (b.kind === 'summary' ? `[summary of #${b.covers[0]}-#${b.covers[1]}] ${b.content}` : `#${b.covers[0]} ${b.role}: ${b.content}`));
  return [`${label(entity)}: window of ${w.tokens} of ${w.budget_tokens} tokens, ${w.blocks.length} blocks`, ...lines].join('\n');
}

/** What a subscription compares to tell a change: the entity's last change, or the block's. */
export async function fingerprint(backend: Backend, uri: string): Promise<string> {
  const ref = parseUri(uri);
  try {
    if (ref.label === undefined) {
      const e = await backend.getEntity(ref.id);
      return `${e.updated_at} ${e.transcript.messages} ${e.window.tokens ?? ''}`;
    }
    return (await backend.getMemory(ref.id, ref.label)).updated_at;
  } catch (err) {
    return `gone: ${(err as Error).message}`;
  }
}
