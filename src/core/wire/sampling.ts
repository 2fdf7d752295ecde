import type { Sampling } from '../chat.js';
import { BadRequestError } from '../errors.js';

/**
 * Per-request sampling, in the OpenAI wire names every surface takes (the facade's chat
 * completions, `POST /v1/entities/{id}/messages`, and `mgpt ask`/`send`, which send these fields):
 * the standard fields, `response_format`, and `provider_options` for any other field of the
 * provider's request body (`-o KEY VALUE`). Checked here, in one place, so every surface refuses
 * the same input; the route's own limits are applied by the provider (its max_tokens is a ceiling).
 */
export const SAMPLING_FIELDS = [
  'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'seed',
  'presence_penalty', 'frequency_penalty', 'response_format', 'provider_options',
] as const;

type Body = Record<string, unknown>;

export function parseSampling(b: Body): Sampling {
  const sampling: Sampling = {
    temperature: num(b, 'temperature', 0, 2),
    topP: num(b, 'top_p', 0, 1),
    maxTokens: maxTokens(b),
    stop: stop(b.stop),
    seed: int(b, 'seed'),
    presencePenalty: num(b, 'presence_penalty', -2, 2),
    frequencyPenalty: num(b, 'frequency_penalty', -2, 2),
  };
  const extra = { ...object(b, 'provider_options'), ...(b.response_format != null ? { response_format: object(b, 'response_format') } : {}) };
  if (Object.keys(extra).length) sampling.extra = extra;
  return defined(sampling);
}

/** Only the sampling fields of a body, or undefined when it has none. */
export function samplingFieldsOf(b: Body): Body | undefined {
  const picked = Object.fromEntries(SAMPLING_FIELDS.filter((f) => b[f] !== undefined).map((f) => [f, b[f]]));
  return Object.keys(picked).length ? picked : undefined;
}

function num(b: Body, field: string, min: number, max: number): number | undefined {
  const v = b[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw new BadRequestError(`${field} must be a number from ${min} to ${max} (got ${JSON.stringify(v)})`);
  return v;
}

function int(b: Body, field: string): number | undefined {
  const v = b[field];
  if (v === undefined || v === null) return undefined;
  if (!Number.isSafeInteger(v)) throw new BadRequestError(`${field} must be an integer (got ${JSON.stringify(v)})`);
  return v as number;
}

function object(b: Body, field: string): Record<string, unknown> | undefined {
  const v = b[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new BadRequestError(`${field} must be an object`);
  return v as Record<string, unknown>;
}

/** `max_completion_tokens` (the current name) or `max_tokens` (the older one). */
function maxTokens(b: Body): number | undefined {
  const v = int(b, 'max_completion_tokens') ?? int(b, 'max_tokens');
  if (v !== undefined && v < 1) throw new BadRequestError(`max_tokens must be at least 1 (got ${v})`);
  return v;
}

function stop(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length > 4 || !list.every((s) => typeof s === 'string' && s !== '')) {
    throw new BadRequestError('stop must be a string or an array of up to 4 non-empty strings');
  }
  return list as string[];
}

function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
