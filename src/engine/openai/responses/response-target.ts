import { BadRequestError, MgptError, NotFoundError } from '../../../core/errors.js';
import type { Entity } from '../../../core/wire/entity-types.js';
import type { ResponseRow } from '../../../store/types.js';
import { parseFacadeModel, unknownModel } from '../chat-facade.js';
import type { FacadeDeps, FacadeServices } from '../chat-types.js';
import type { ResponseRequest } from './response-request.js';

/** Where a response goes: an entity (continuing a response or a conversation, or as it stands), or a platform model (stateless). */
export type ResponseTarget =
  | { kind: 'platform'; model: string }
  | { kind: 'entity'; entity: Entity; rootId: string; prev?: ResponseRow; conversation?: string };

/** A conversation is an entity: its id is the entity's UUID as 32 hex digits after `conv_`, one to one. */
export function conversationIdOf(entityId: string): string {
  return `conv_${entityId.replace(/-/g, '')}`;
}

/** The entity id a conversation id names, or undefined when it is not one of ours. */
export function entityIdOfConversation(conv: string): string | undefined {
  const m = /^conv_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/.exec(conv);
  return m ? m.slice(1).join('-') : undefined;
}

export function responseNotFound(id: string): NotFoundError {
  return new NotFoundError(`Response with id '${id}' not found.`);
}

export function conversationNotFound(id: string): NotFoundError {
  return new NotFoundError(`Conversation with id '${id}' not found.`);
}

type Services = Pick<FacadeServices, 'entities'>;

/**
 * Reads the request's `model`, `previous_response_id` and `conversation` together: a previous
 * response or a conversation names the entity, and `model` must then name the same one (as
 * `entity:REF`, or the chain's first entity for a branch) or the platform model it runs on.
 */
export async function resolveTarget(engine: Services, deps: FacadeDeps, req: ResponseRequest, accountId: string): Promise<ResponseTarget> {
  const model = parseFacadeModel(req.model, deps.namedModels);
  if (model.kind === 'universe') throw new BadRequestError(`${req.model}: a universe answers POST /api/mgpt/responses, not the Responses API`);
  if (req.previousResponseId && req.conversation) throw new BadRequestError('previous_response_id and conversation cannot both be given', { hint: 'a conversation already continues from its latest response' });
  if (req.conversation) {
    const entity = await conversationEntity(engine, deps, req.conversation, accountId);
    await checkModel(engine, req.model, model, entity, [entity.id], accountId, `conversation ${req.conversation}`);
    return { kind: 'entity', entity, rootId: entity.id, conversation: req.conversation };
  }
  if (req.previousResponseId) {
    const prev = await deps.store.responses.get(accountId, req.previousResponseId);
    if (!prev) throw new NotFoundError(`Previous response with id '${req.previousResponseId}' not found.`);
    const entity = await engine.entities.get(prev.entityId, accountId);
    await checkModel(engine, req.model, model, entity, [prev.entityId, prev.rootEntityId], accountId, `previous response ${prev.id}`);
    return { kind: 'entity', entity, rootId: prev.rootEntityId, prev };
  }
  if (model.kind === 'platform') return { kind: 'platform', model: model.id };
  const entity = await resolveEntity(engine, req.model, model.ref, accountId);
  return { kind: 'entity', entity, rootId: entity.id };
}

/** The entity of a conversation id of this account; a deleted conversation is gone even though its entity stays. */
export async function conversationEntity(engine: { entities: Pick<Services['entities'], 'get'> }, deps: Pick<FacadeDeps, 'store'>, conv: string, accountId: string): Promise<Entity> {
  const id = entityIdOfConversation(conv);
  if (!id) throw conversationNotFound(conv);
  const row = await deps.store.responses.conversation(accountId, id);
  if (row?.deletedAt) throw conversationNotFound(conv);
  try {
    return await engine.entities.get(id, accountId);
  } catch (err) {
    if (err instanceof NotFoundError) throw conversationNotFound(conv);
    throw err;
  }
}

async function checkModel(
  engine: Services, name: string, model: ReturnType<typeof parseFacadeModel>, entity: Entity, allowed: string[], accountId: string, what: string,
): Promise<void> {
  if (model.kind === 'platform') {
    if (model.id === entity.model) return;
    throw new BadRequestError(`model ${JSON.stringify(name)} is not the model ${what} runs on: send ${JSON.stringify(entity.model)} or "entity:${entity.id}"`);
  }
  if (model.kind !== 'entity') return;
  const named = await resolveEntity(engine, name, model.ref, accountId);
  if (allowed.includes(named.id)) return;
  throw new BadRequestError(`model ${JSON.stringify(name)} names entity ${named.id}, but ${what} belongs to entity ${entity.id}`, {
    hint: `send "entity:${entity.id}" or ${JSON.stringify(entity.model)}`,
  });
}

async function resolveEntity(engine: Services, model: string, ref: string, accountId: string): Promise<Entity> {
  try {
    return await engine.entities.resolve(ref, accountId);
  } catch (err) {
    if (err instanceof MgptError && err.status === 404) throw unknownModel(model);
    throw err;
  }
}
