import { BadRequestError } from '../../../core/errors.js';
import { parseSampling } from '../../../core/wire/sampling.js';
import type { ResponseFunctionTool } from '../../../core/wire/responses-types.js';
import type { ToolChoice, ToolDefinition } from '../../../providers/spec.js';
import type { ChatOptions } from '../chat-options.js';

/** One input item, read: a message's text, a call the model made, or the client's answer to one. */
export type InputItem =
  | { type: 'message'; role: 'user' | 'assistant' | 'system'; text: string }
  | { type: 'function_call'; callId: string; name: string; arguments: string }
  | { type: 'function_call_output'; callId: string; output: string };

/** A POST /v1/responses body, parsed where it enters (the route hands the body over unread). */
export interface ResponseRequest {
  model: string;
  input: InputItem[];
  instructions?: string;
  options: ChatOptions;
  /** The tools as the client sent them (function tools), echoed in the response. */
  wireTools: ResponseFunctionTool[];
  /** Tools of other kinds (web_search, custom...), which an entity cannot run: left out, and named in a header. */
  ignoredTools: string[];
  toolChoice: unknown;
  store: boolean;
  metadata: Record<string, string>;
  previousResponseId?: string;
  conversation?: string;
  truncation: 'auto' | 'disabled';
  parallelToolCalls: boolean;
  maxOutputTokens?: number;
}

/**
 * Fields OpenAI's clients send that change nothing here (reasoning settings, cache keys, includes
 * of encrypted reasoning...): accepted and left alone. Any other unknown field is a 400.
 */
const ACCEPTED = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'temperature', 'top_p', 'max_output_tokens', 'stream', 'store',
  'metadata', 'previous_response_id', 'conversation', 'truncation', 'parallel_tool_calls', 'include', 'reasoning',
  'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier', 'user', 'service_tier', 'text', 'stream_options',
  'top_logprobs', 'background', 'max_tool_calls', 'client_metadata',
]);

export function parseResponseRequest(b: Record<string, unknown>): ResponseRequest {
  const unknown = Object.keys(b).find((k) => !ACCEPTED.has(k));
  if (unknown) throw new BadRequestError(`unknown field ${JSON.stringify(unknown)} in a response request`);
  if (typeof b.model !== 'string' || b.model === '') throw new BadRequestError('model is required (a string)');
  if (b.background === true) throw new BadRequestError('background responses are not supported: send the request and wait for it, or stream it');
  checkText(b.text);
  const { tools, wire, ignored } = parseTools(b.tools);
  const maxOutputTokens = optionalInt(b, 'max_output_tokens', 1);
  const sampling = parseSampling({ temperature: b.temperature, top_p: b.top_p, max_tokens: maxOutputTokens });
  return {
    model: b.model,
    // No input: a conversation's held message is the turn's (added before as an item).
    input: b.input === undefined || b.input === null ? [] : parseInput(b.input),
    instructions: optionalString(b, 'instructions'),
    options: { sampling, tools, toolChoice: parseToolChoice(b.tool_choice, tools), streamed: flag(b, 'stream', false) },
    wireTools: wire,
    ignoredTools: ignored,
    toolChoice: b.tool_choice ?? 'auto',
    store: flag(b, 'store', true),
    metadata: parseMetadata(b.metadata),
    previousResponseId: optionalString(b, 'previous_response_id'),
    conversation: conversationOf(b.conversation),
    truncation: truncationOf(b.truncation),
    parallelToolCalls: flag(b, 'parallel_tool_calls', true),
    maxOutputTokens,
  };
}

/** `input`: a string (one user message) or a list of items. */
export function parseInput(v: unknown): InputItem[] {
  if (typeof v === 'string') return [{ type: 'message', role: 'user', text: v }];
  if (!Array.isArray(v)) throw new BadRequestError('input must be a string or an array of items');
  return v.flatMap((item, i) => inputItem(item, `input[${i}]`));
}

/** One item, or none for the kinds that carry nothing a text model uses (reasoning). */
export function inputItem(item: unknown, at: string): InputItem[] {
  if (typeof item !== 'object' || item === null) throw new BadRequestError(`${at} must be an object`);
  const it = item as Record<string, unknown>;
  const type = it.type ?? (it.role !== undefined ? 'message' : undefined);
  if (type === 'message') return [messageItem(it, at)];
  // Reasoning carries nothing a text model uses; a compaction item is the entity's own summary, which it already holds.
  if (type === 'reasoning' || type === 'compaction') return [];
  if (type === 'function_call') {
    return [{ type: 'function_call', callId: str(it.call_id, `${at}.call_id`), name: str(it.name, `${at}.name`), arguments: typeof it.arguments === 'string' ? it.arguments : JSON.stringify(it.arguments ?? {}) }];
  }
  if (type === 'function_call_output') return [{ type: 'function_call_output', callId: str(it.call_id, `${at}.call_id`), output: outputText(it.output, at) }];
  throw new BadRequestError(`${at}.type ${JSON.stringify(type)} is not supported (message, function_call, function_call_output)`, {
    hint: 'an entity takes text messages and function tools',
  });
}

function messageItem(it: Record<string, unknown>, at: string): InputItem {
  const role = it.role === 'developer' ? 'system' : it.role;
  if (role !== 'user' && role !== 'assistant' && role !== 'system') {
    throw new BadRequestError(`${at}.role ${JSON.stringify(it.role)} is not supported (user, assistant, system, developer)`);
  }
  return { type: 'message', role, text: textOf(it.content, at) };
}

function textOf(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new BadRequestError(`${at}.content must be a string or an array of text parts`);
  return content.map((p, j) => {
    const part = p as { type?: unknown; text?: unknown };
    if ((part?.type === 'input_text' || part?.type === 'output_text' || part?.type === 'text') && typeof part.text === 'string') return part.text;
    throw new BadRequestError(`${at}.content[${j}]: only text parts are supported (input_text, output_text)`, { hint: 'images and files cannot be sent to an entity' });
  }).join('');
}

function outputText(v: unknown, at: string): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return textOf(v, `${at}.output`);
  throw new BadRequestError(`${at}.output must be a string or an array of text parts`);
}

function parseTools(v: unknown): { tools?: ToolDefinition[]; wire: ResponseFunctionTool[]; ignored: string[] } {
  if (v === undefined || v === null) return { wire: [], ignored: [] };
  if (!Array.isArray(v)) throw new BadRequestError('tools must be an array');
  const wire: ResponseFunctionTool[] = [];
  const ignored: string[] = [];
  v.forEach((t, i) => {
    const tool = t as Record<string, unknown>;
    if (tool?.type !== 'function') return void ignored.push(typeof tool?.type === 'string' ? tool.type : `tools[${i}]`);
    if (typeof tool.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(tool.name)) throw new BadRequestError(`tools[${i}] must be { type: "function", name, description?, parameters? } with a name of letters, digits, _ or -`);
    const parameters = (tool.parameters ?? null) as Record<string, unknown> | null;
    wire.push({ type: 'function', name: tool.name, description: typeof tool.description === 'string' ? tool.description : null, parameters, strict: tool.strict === true });
  });
  const tools = wire.map((t): ToolDefinition => ({ type: 'function', name: t.name, description: t.description ?? undefined, parameters: t.parameters ?? undefined }));
  return { tools: tools.length ? tools : undefined, wire, ignored };
}

function parseToolChoice(v: unknown, tools: ToolDefinition[] | undefined): ToolChoice | undefined {
  if (v === undefined || v === null || v === 'auto') return v === 'auto' ? 'auto' : undefined;
  if (v === 'none') return v;
  if (v === 'required') {
    if (!tools) throw new BadRequestError('tool_choice "required" needs function tools');
    return v;
  }
  const c = v as { type?: unknown; name?: unknown };
  if (c?.type !== 'function' || typeof c.name !== 'string') throw new BadRequestError('tool_choice must be "auto", "none", "required" or { type: "function", name }');
  if (!tools?.some((t) => t.name === c.name)) throw new BadRequestError(`tool_choice names ${JSON.stringify(c.name)}, which is not among the tools`);
  return { type: 'function', name: c.name };
}

/** Up to 16 pairs, keys up to 64 characters, values up to 512: OpenAI's limits. */
export function parseMetadata(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new BadRequestError('metadata must be an object of strings');
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > 16) throw new BadRequestError(`metadata has ${entries.length} keys; at most 16`);
  for (const [k, val] of entries) {
    if (k.length > 64) throw new BadRequestError(`metadata key ${JSON.stringify(k.slice(0, 20))}... is over 64 characters`);
    if (typeof val !== 'string' || val.length > 512) throw new BadRequestError(`metadata.${k} must be a string of at most 512 characters`);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

function conversationOf(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string' && v !== '') return v;
  const id = (v as { id?: unknown })?.id;
  if (typeof id === 'string' && id !== '') return id;
  throw new BadRequestError('conversation must be a conversation id or { id }');
}

function truncationOf(v: unknown): 'auto' | 'disabled' {
  if (v === undefined || v === null) return 'disabled';
  if (v === 'auto' || v === 'disabled') return v;
  throw new BadRequestError('truncation must be "auto" or "disabled"');
}

/** Only plain text output: a JSON schema format would need the provider's structured output, which this facade does not pass on. */
function checkText(v: unknown): void {
  const type = (v as { format?: { type?: unknown } } | undefined)?.format?.type;
  if (type === undefined || type === 'text') return;
  throw new BadRequestError(`text.format ${JSON.stringify(type)} is not supported on an entity; only "text"`);
}

function flag(b: Record<string, unknown>, field: string, dflt: boolean): boolean {
  const v = b[field];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') throw new BadRequestError(`${field} must be a boolean`);
  return v;
}

function optionalString(b: Record<string, unknown>, field: string): string | undefined {
  const v = b[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new BadRequestError(`${field} must be a string`);
  return v;
}

function optionalInt(b: Record<string, unknown>, field: string, min: number): number | undefined {
  const v = b[field];
  if (v === undefined || v === null) return undefined;
  if (!Number.isSafeInteger(v) || (v as number) < min) throw new BadRequestError(`${field} must be an integer of at least ${min}`);
  return v as number;
}

function str(v: unknown, at: string): string {
  if (typeof v !== 'string' || v === '') throw new BadRequestError(`${at} is required (a string)`);
  return v;
}
