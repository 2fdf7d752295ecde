import { BadRequestError } from '../../core/errors.js';
import { parseSampling } from '../../core/wire/sampling.js';
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
 * `n` other than 1 is a 400 (one choice per request). Sampling is read as every surface reads it
 * (core/wire/sampling.ts); the route's own limits are applied by the provider.
 */
export function parseChatOptions(b: Body): ChatOptions {
  if (b.n !== undefined && b.n !== null && b.n !== 1) throw new BadRequestError(`n must be 1: this server returns one choice per request (got ${JSON.stringify(b.n)})`, { hint: 'send n copies of the request instead' });
  const tools = parseTools(b.tools);
  return { sampling: parseSampling(b), tools, toolChoice: parseToolChoice(b.tool_choice, tools), streamed: b.stream === true };
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
