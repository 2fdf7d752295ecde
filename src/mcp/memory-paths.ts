import { BadRequestError } from '../core/errors.js';
import type { Entity } from '../core/wire/entity-types.js';

/**
 * The memory tool's paths, as Anthropic's memory tool names files (docs/mcp.md#memory):
 * `/memories` holds a directory per entity, `/memories/<entity>/<label>` is one pinned memory block.
 * An entity is named by its name or its id; a name with a `/` is reached by its id.
 */
export const MEMORIES = '/memories';

export type MemoryPath = { kind: 'root' } | { kind: 'entity'; entity: string } | { kind: 'block'; entity: string; label: string };

export function parsePath(what: string, path: string): MemoryPath {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (trimmed !== MEMORIES && !trimmed.startsWith(`${MEMORIES}/`)) {
    throw new BadRequestError(`${what} ${JSON.stringify(path.slice(0, 200))} is outside ${MEMORIES}`, { hint: 'paths are /memories, /memories/ENTITY or /memories/ENTITY/LABEL' });
  }
  const parts = trimmed.slice(MEMORIES.length + 1).split('/').filter((p, i, all) => p !== '' || all.length > 1);
  if (parts.some((p) => p === '' || p === '.' || p === '..')) throw new BadRequestError(`${what} ${JSON.stringify(path.slice(0, 200))} has an empty, . or .. part`);
  if (trimmed === MEMORIES) return { kind: 'root' };
  if (parts.length === 1) return { kind: 'entity', entity: parts[0] };
  if (parts.length === 2) return { kind: 'block', entity: parts[0], label: parts[1] };
  throw new BadRequestError(`${what} ${JSON.stringify(path.slice(0, 200))} is too deep: a memory file is /memories/ENTITY/LABEL`);
}

/** How `/memories` names an entity's directory: its name when that names it alone, else its id. */
export function dirOf(entity: Entity, all: readonly Entity[]): string {
  const unique = entity.name && !entity.name.includes('/') && all.filter((e) => e.name === entity.name).length === 1;
  return `${MEMORIES}/${unique ? entity.name : entity.id}`;
}

/** A path that must be a block (create, str_replace, insert, rename). */
export function blockOf(what: string, path: string): { entity: string; label: string } {
  const p = parsePath(what, path);
  if (p.kind !== 'block') throw new BadRequestError(`${what} ${JSON.stringify(path.slice(0, 200))} is a directory; a memory file is /memories/ENTITY/LABEL`);
  return p;
}
