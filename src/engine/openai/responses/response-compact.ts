import { BadRequestError } from '../../../core/errors.js';
import type { Entity } from '../../../core/wire/entity-types.js';
import type { CompactedResponse, MessageItem } from '../../../core/wire/responses-types.js';
import type { FacadeDeps } from '../chat-types.js';
import { parseFacadeModel } from '../chat-facade.js';
import { resolveTarget } from './response-target.js';
import type { ResponsesEngine } from './responses-types.js';

const ACCEPTED = new Set(['model', 'input', 'instructions', 'previous_response_id', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier']);

/**
 * POST /v1/responses/compact as the entity's rotation: the oldest blocks of its window fold into a
 * summary now, under its lease, recorded like any rotation. The answer is OpenAI's compacted
 * response: the user messages still live in the window, then one compaction item whose content is
 * the summary (plain text: nothing here is encrypted). The transcript is untouched, so a client
 * goes on with the same previous_response_id (or conversation); a compaction item sent back as
 * input is accepted and left out, since the entity already holds it.
 */
export async function compactEntity(engine: ResponsesEngine, deps: FacadeDeps, b: Record<string, unknown>, accountId: string, signal: AbortSignal | undefined, id: string): Promise<CompactedResponse> {
  const unknown = Object.keys(b).find((k) => !ACCEPTED.has(k));
  if (unknown) throw new BadRequestError(`unknown field ${JSON.stringify(unknown)} in a compact request`);
  if (Array.isArray(b.input) ? b.input.length > 0 : b.input !== undefined && b.input !== null && b.input !== '') {
    throw new BadRequestError('an entity compacts its own window: send previous_response_id (or an entity: model) without input', {
      hint: 'the items an entity holds are its transcript; compaction folds them into a summary',
    });
  }
  const entity = await entityOf(engine, deps, b, accountId);
  const r = await engine.entities.rotate(entity.id, { action: 'rotate' }, accountId, signal);
  const live: MessageItem[] = r.window.blocks
    .filter((bl) => bl.kind === 'message' && bl.role === 'user')
    .map((bl) => ({ id: `msg_${entity.id.replace(/-/g, '')}_${bl.covers[0]}`, type: 'message', role: 'user', status: 'completed', content: [{ type: 'input_text', text: bl.content }] }));
  const u = r.rotation.usage;
  const compaction = { id: `cmp_${r.rotation.id.replace(/-/g, '')}`, type: 'compaction' as const, encrypted_content: r.rotation.summary.text };
  return {
    id, object: 'response.compaction', created_at: Math.floor(deps.clock.now() / 1000), output: [...live, compaction],
    usage: {
      input_tokens: u.prompt_tokens, input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
      output_tokens: u.completion_tokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: u.prompt_tokens + u.completion_tokens,
    },
  };
}

async function entityOf(engine: ResponsesEngine, deps: FacadeDeps, b: Record<string, unknown>, accountId: string): Promise<Entity> {
  if (typeof b.model !== 'string' || b.model === '') throw new BadRequestError('model is required (a string)');
  const prev = b.previous_response_id;
  if (prev !== undefined && prev !== null && typeof prev !== 'string') throw new BadRequestError('previous_response_id must be a string');
  if (!prev && parseFacadeModel(b.model, deps.namedModels).kind !== 'entity') {
    throw new BadRequestError('compact needs previous_response_id or an entity: model: a platform model keeps no state to compact');
  }
  const req = { model: b.model, previousResponseId: prev || undefined } as Parameters<typeof resolveTarget>[2];
  const target = await resolveTarget(engine, deps, req, accountId);
  if (target.kind !== 'entity') throw new BadRequestError('compact needs an entity');
  return target.entity;
}
