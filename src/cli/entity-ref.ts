import type { Entity } from '../core/wire/entity-types.js';
import type { CliContext } from './context.js';

/** An ENTITY argument: an id, a unique id prefix (4+ characters, as in git) or the exact name of one entity. */
export async function resolveEntity(ctx: CliContext, ref: string): Promise<Entity> {
  return (await ctx.backend()).resolveEntity(ref);
}
