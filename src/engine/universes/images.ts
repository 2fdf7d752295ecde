import { ProviderError } from '../../core/errors.js';
import { IMAGE_ALIAS, type ImageRequest, type ImageResponse, LOCAL_USER_ID } from '../../core/wire/universe-types.js';
import type { ChatContentPart, ChatMessage } from '../../providers/spec.js';
import type { EngineDeps } from '../deps.js';
import { writeLog } from '../platform/logs.js';
import { parseImage } from '../../core/wire/universe-input.js';

/** What an image request reads: the model routing, the clock, ids and the store (its log). */
type ImageDeps = Pick<EngineDeps, 'chatModel' | 'clock' | 'newId' | 'store'>;

/**
 * The provider message of POST /images, in the seed's order: the system prompt, then one user
 * message whose parts are the references (the legacy backgroundReference first), then the
 * description, then additionalPrompt.
 */
export function imageMessages(r: ImageRequest): ChatMessage[] {
  const parts: ChatContentPart[] = [];
  if (r.backgroundReference) parts.push(r.backgroundReference);
  parts.push(...(r.referenceImages ?? []));
  parts.push({ type: 'text', text: r.description });
  if (r.additionalPrompt) parts.push({ type: 'text', text: r.additionalPrompt });
  return [
    { role: 'system', content: r.systemPrompt },
    { role: 'user', content: parts },
  ];
}

export async function generateImage(deps: ImageDeps, input: ImageRequest, opts: { userId?: string; signal?: AbortSignal } = {}): Promise<ImageResponse> {
  const userId = opts.userId ?? LOCAL_USER_ID;
  const t0 = deps.clock.now();
  const r = parseImage(input);
  const alias = r.model ?? IMAGE_ALIAS;
  const model = await deps.chatModel(alias);
  const request = { sceneUid: r.sceneUid, parts: (r.referenceImages?.length ?? 0) + (r.backgroundReference ? 1 : 0), imageConfig: r.imageConfig ?? {} };
  const tp = deps.clock.now();
  const log = (status: string, error: string | null, images: number, usage?: { inputTokens: number; outputTokens: number }) =>
    writeLog(deps, {
      kind: 'image', userId, gameId: null, universeId: null, requestId: null, model: alias, providerModel: model.modelId,
      status, error, inputTokens: usage?.inputTokens ?? 0, outputTokens: usage?.outputTokens ?? 0, costUsd: 0,
      totalMs: deps.clock.now() - t0, providerMs: deps.clock.now() - tp, request, response: { images },
    });
  if (!model.generateImage) {
    await log('error', `provider ${model.provider} has no image output`, 0);
    throw new ProviderError(`the provider routed for ${alias} (${model.provider}) cannot generate images`, { status: 502 });
  }
  try {
    const out = await model.generateImage({
      messages: imageMessages(r),
      imageSize: r.imageConfig?.imageSize ?? '1K',
      aspectRatio: r.imageConfig?.aspectRatio ?? '16:9',
      signal: opts.signal,
    });
    const providerMs = deps.clock.now() - tp;
    const id = await log('ok', null, out.images.length, out.usage);
    return { sceneUid: r.sceneUid, model: alias, images: out.images, requestLog: { id }, timingBreakdown: { totalMs: deps.clock.now() - t0, providerMs } };
  } catch (err) {
    await log('error', (err as Error).message, 0);
    throw err;
  }
}

