import { BadRequestError, type FieldError, ProviderError } from '../../core/errors.js';
import { IMAGE_ALIAS, type ImageRequest, type ImageResponse, LOCAL_USER_ID } from '../../core/universe-types.js';
import type { ChatContentPart, ChatMessage } from '../../providers/spec.js';
import type { EngineDeps } from '../deps.js';
import { writeLog } from '../platform/logs.js';
import { checkFields } from './respond-validate.js';

const SIZES = ['1K', '2K', '4K'] as const;
const FIELDS = new Set(['sceneUid', 'systemPrompt', 'description', 'additionalPrompt', 'referenceImages', 'backgroundReference', 'imageConfig', 'model']);
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

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

export function validateImage(body: unknown): ImageRequest {
  if (!isObject(body)) throw new BadRequestError('the request body must be a JSON object');
  const errors: FieldError[] = [];
  const err = (field: string, message: string) => errors.push({ field, message });
  checkFields(body, FIELDS, err);
  for (const f of ['sceneUid', 'systemPrompt', 'description']) {
    if (typeof body[f] !== 'string' || (body[f] as string).trim() === '') err(f, 'required: a non-empty string');
  }
  if (body.additionalPrompt !== undefined && typeof body.additionalPrompt !== 'string') err('additionalPrompt', 'must be a string');
  if (body.model !== undefined && (typeof body.model !== 'string' || body.model === '')) err('model', 'must be a non-empty string');
  if (body.referenceImages !== undefined) {
    if (!Array.isArray(body.referenceImages)) err('referenceImages', 'must be an array of text and image parts');
    else body.referenceImages.forEach((p, i) => checkPart(p, `referenceImages[${i}]`, err));
  }
  if (body.backgroundReference !== undefined) checkPart(body.backgroundReference, 'backgroundReference', err);
  if (body.imageConfig !== undefined) {
    const c = body.imageConfig;
    if (!isObject(c)) err('imageConfig', 'must be an object');
    else {
      if (c.imageSize !== undefined && !(SIZES as readonly unknown[]).includes(c.imageSize)) err('imageConfig.imageSize', `one of ${SIZES.join(', ')}`);
      if (c.aspectRatio !== undefined && (typeof c.aspectRatio !== 'string' || !/^[1-9]\d{0,2}:[1-9]\d{0,2}$/.test(c.aspectRatio))) {
        err('imageConfig.aspectRatio', 'W:H, such as 16:9');
      }
      for (const k of Object.keys(c)) if (k !== 'imageSize' && k !== 'aspectRatio') err(`imageConfig.${k}`, 'unknown field');
    }
  }
  if (errors.length) throw new BadRequestError(errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  return body as unknown as ImageRequest;
}

function checkPart(p: unknown, at: string, err: (f: string, m: string) => void): void {
  if (!isObject(p)) return err(at, 'must be a part object');
  if (p.type === 'text' && typeof p.text === 'string') return;
  if (p.type === 'image_url' && isObject(p.image_url) && typeof p.image_url.url === 'string' && /^(https?:|data:image\/)/.test(p.image_url.url)) return;
  err(at, '{ type: "text", text } or { type: "image_url", image_url: { url } } (http(s) or data:image/...)');
}

export async function generateImage(deps: EngineDeps, body: unknown, opts: { userId?: string; signal?: AbortSignal } = {}): Promise<ImageResponse> {
  const userId = opts.userId ?? LOCAL_USER_ID;
  const t0 = deps.clock.now();
  const r = validateImage(body);
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

