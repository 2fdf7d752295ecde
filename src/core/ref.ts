import { BadRequestError, NotFoundError } from './errors.js';

/** The shortest id prefix that resolves, as in git. */
export const MIN_ID_PREFIX = 4;
/** How many characters of an id lists and the status line show; they work as input. */
export const SHORT_ID = 8;

export function shortId(id: string): string {
  return id.slice(0, SHORT_ID);
}

/**
 * The one `what` (entity, universe, log, key) that `ref` names among `candidates`: its id, a
 * prefix of its id of 4+ characters, or its name. None is a 404; several, a 400 listing them.
 */
export function pickByRef<T extends { id: string; name?: string | null }>(what: string, ref: string, candidates: readonly T[], notFoundHint: string): T {
  const lower = ref.toLowerCase();
  const prefix = ref.length >= MIN_ID_PREFIX;
  const hits = candidates.filter((e) => (e.name && e.name === ref) || e.id === ref || e.id === lower || (prefix && e.id.startsWith(lower)));
  if (hits.length === 1) return hits[0];
  if (hits.length === 0) throw new NotFoundError(`no ${what} ${JSON.stringify(ref)}`, { hint: notFoundHint });
  const shown = hits.slice(0, 10).map((e) => `${shortId(e.id)}${e.name ? `  ${e.name}` : ''}`);
  throw new BadRequestError(`${JSON.stringify(ref)} names ${hits.length > 10 ? 'more than 10' : hits.length} ${what === 'entity' ? 'entities' : `${what}s`}`, {
    hint: `use a longer id prefix or the full id:\n  ${shown.join('\n  ')}`,
  });
}

/**
 * How a message names an entity: by the name its user gave it (quoted when it has spaces or
 * quotes), else by its id. The id goes with the error as `entityId` for machine output.
 */
export function entityLabel(e: { id: string; name?: string | null }): string {
  if (!e.name) return e.id;
  return /^[\p{L}\p{N}_.-]+$/u.test(e.name) ? e.name : JSON.stringify(e.name);
}
