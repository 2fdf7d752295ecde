import type { Entity } from '../core/entity-types.js';
import { BadRequestError, NotFoundError } from '../core/errors.js';
import type { CliContext } from './context.js';

/** An ENTITY argument: an id, or the exact name of one entity. */
export async function resolveEntity(ctx: CliContext, ref: string): Promise<Entity> {
  const backend = await ctx.backend();
  try {
    return await backend.getEntity(ref);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    const named = (await backend.listEntities()).data.filter((e) => e.name === ref);
    if (named.length === 1) return backend.getEntity(named[0].id);
    if (named.length > 1) {
      throw new BadRequestError(`${named.length} entities are named ${JSON.stringify(ref)}`, {
        hint: `use an id: ${named.map((e) => e.id).join(', ')}`,
      });
    }
    throw err;
  }
}
