import { BadRequestError } from '../../core/errors.js';
import type { Sampling, ToolChoice, ToolDefinition } from '../../providers/spec.js';

/** What a chat-completions request asks of the generation, besides its messages. */
export interface ChatOptions {
  sampling: Sampling;
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** The reply streams to the client (`stream: true`): a client that stops it keeps what it was shown. */
  streamed: boolean;
}

type Body = Record<string, unknown>;

/**
 * The sampling fields and tools of a request, checked: a wrong type is a 400 naming the field,
 * `n` other than 1 is a 400 (one choice per request), and `response_format` goes to the provider
 * as it is. The route's own limits are applied by the provider (a route's max_tokens is a ceiling).
 */
export function parseChatOptions(b: Body): ChatOptions {
  if (b.n !== undefined && b.n !== null && b.n !== 1) throw new BadRequestError(`n must be 1: this server returns one choice per request (got ${JSON.stringify(b.n)})`, { hint: 'send n copies of the request instead' });
  const sampling: Sampling = {
    temperature: num(b, 'temperature', 0, 2),
    topP: num(b, 'top_p', 0, 1),
    maxTokens: maxTokens(b),
    stop: stop(b.stop),
    seed: int(b, 'seed'),
    presencePenalty: num(b, 'presence_penalty', -2, 2),
    frequencyPenalty: num(b, 'frequency_penalty', -2, 2),
  };
  if (b.response_format !== undefined && b.response_format !== null) {
    if (typeof b.response_format !== 'object') throw new BadRequestError('response_format must be an object');
    sampling.extra = { response_format: b.response_format };
  }
  const tools = parseTools(b.tools);
  return { sampling: defined(sampling), tools, toolChoice: parseToolChoice(b.tool_choice, tools), streamed: b.stream === true };
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

function parseTools(v: unknown): ToolDefinition[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new BadRequestError('tools must be an array');
  const tools = v.map((t, i): ToolDefinition => {
    const f = (t as { type?: unknown; function?: { name?: unknown; description?: unknown; parameters?: unknown } })?.function;
    if ((t as { type?: unknown })?.type !== 'function' || typeof f?.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(f.name)) {
      throw new BadRequestError(`tools[${i}] must be { type: "function", function: { name, description?, parameters? } }`);
    }
    return { type: 'function', name: f.name, description: typeof f.description === 'string' ? f.description : undefined, parameters: f.parameters as Record<string, unknown> | undefined };
  });
  return tools.length ? tools : undefined;
}

function parseToolChoice(v: unknown, tools: ToolDefinition[] | undefined): ToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === 'auto' || v === 'none') return v;
  if (v === 'required') {
    if (!tools) throw new BadRequestError('tool_choice "required" needs tools');
    return v;
  }
  const name = (v as { function?: { name?: unknown } })?.function?.name;
  if (typeof name !== 'string') throw new BadRequestError('tool_choice must be "auto", "none", "required" or { type: "function", function: { name } }');
  if (!tools?.some((t) => t.name === name)) throw new BadRequestError(`tool_choice names ${JSON.stringify(name)}, which is not among the tools`);
  return { type: 'function', name };
}

function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
