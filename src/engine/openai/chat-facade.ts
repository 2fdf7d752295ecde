import { BadRequestError, NotFoundError } from '../../core/errors.js';
import { KNOWN_MODELS } from '../../core/models.js';
import type { ChatMessage, ChatToolCall } from '../../providers/spec.js';

/**
 * The rules of the OpenAI-compatible facade (docs/design.md#extensions-beyond-the-wire-contracts), without HTTP: which target a
 * `model` names, what a client's messages must look like, and how a resent history is reconciled
 * with an entity's transcript.
 */

export const ENTITY_PREFIX = 'entity:';
export const UNIVERSE_PREFIX = 'universe:';

export type FacadeTarget =
  | { kind: 'entity'; ref: string }
  | { kind: 'universe'; ref: string }
  | { kind: 'platform'; id: string };

/**
 * A message as an OpenAI client sends it, its text joined. A tool round is an assistant message
 * with `toolCalls` (its content often empty) and `tool` messages answering them.
 */
export interface ClientMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls?: ChatToolCall[];
  toolCallId?: string;
}

/** The models a stateless completion can use: platform ids and text aliases (not the image alias). */
export const COMPLETION_MODELS = KNOWN_MODELS.filter((m) => m.kind !== 'image');

/** What a request's `model` names; `named` are the models added with `mgpt models add`. */
export function parseFacadeModel(model: unknown, named: ReadonlySet<string> = new Set()): FacadeTarget {
  if (typeof model !== 'string' || model === '') throw new BadRequestError('model is required (a string)');
  if (model.startsWith(ENTITY_PREFIX)) return { kind: 'entity', ref: nonEmpty(model.slice(ENTITY_PREFIX.length), model) };
  if (model.startsWith(UNIVERSE_PREFIX)) return { kind: 'universe', ref: nonEmpty(model.slice(UNIVERSE_PREFIX.length), model) };
  if (COMPLETION_MODELS.some((m) => m.id === model) || named.has(model)) return { kind: 'platform', id: model };
  throw unknownModel(model);
}

export function unknownModel(model: string): NotFoundError {
  return new NotFoundError(`The model \`${model}\` does not exist`, { hint: 'list models with: mgpt models (GET /v1/models over HTTP)' });
}

function nonEmpty(ref: string, model: string): string {
  if (ref === '') throw unknownModel(model);
  return ref;
}

/** `messages` as OpenAI clients send it: roles system|developer|user|assistant|tool, text content (a string or text parts). */
export function checkMessages(raw: unknown): ClientMessage[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new BadRequestError('messages must be a non-empty array');
  return raw.map((m, i) => {
    if (typeof m !== 'object' || m === null) throw new BadRequestError(`messages[${i}] must be an object`);
    const { role, content } = m as { role?: unknown; content?: unknown };
    const r = role === 'developer' ? 'system' : role;
    if (r === 'assistant') return assistantMessage(m as Record<string, unknown>, i);
    if (r === 'tool') return toolMessage(m as Record<string, unknown>, i);
    if (r !== 'system' && r !== 'user') {
      throw new BadRequestError(`messages[${i}].role ${JSON.stringify(role)} is not supported (system, developer, user, assistant, tool)`);
    }
    return { role: r, content: textOf(content, i) };
  });
}

function assistantMessage(m: Record<string, unknown>, i: number): ClientMessage {
  const content = m.content === null || m.content === undefined ? '' : textOf(m.content, i);
  if (m.tool_calls === undefined || m.tool_calls === null || (Array.isArray(m.tool_calls) && m.tool_calls.length === 0)) return { role: 'assistant', content };
  if (!Array.isArray(m.tool_calls)) throw new BadRequestError(`messages[${i}].tool_calls must be an array`);
  const toolCalls = m.tool_calls.map((c, j): ChatToolCall => {
    const call = c as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
    if (typeof call?.id !== 'string' || typeof call.function?.name !== 'string') {
      throw new BadRequestError(`messages[${i}].tool_calls[${j}] needs an id and function.name`);
    }
    const args = call.function.arguments;
    return { id: call.id, type: 'function', function: { name: call.function.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) } };
  });
  return { role: 'assistant', content, toolCalls };
}

function toolMessage(m: Record<string, unknown>, i: number): ClientMessage {
  if (typeof m.tool_call_id !== 'string' || m.tool_call_id === '') throw new BadRequestError(`messages[${i}].tool_call_id is required for a tool message`);
  return { role: 'tool', content: textOf(m.content ?? '', i), toolCallId: m.tool_call_id };
}

/** A client message as the provider takes it. */
export function chatMessage(m: ClientMessage): ChatMessage & { content: string } {
  if (m.role === 'tool') return { role: 'tool', content: m.content, tool_call_id: m.toolCallId! };
  if (m.role === 'assistant' && m.toolCalls) return { role: 'assistant', content: m.content, tool_calls: m.toolCalls };
  return { role: m.role, content: m.content } as ChatMessage & { content: string };
}

function textOf(content: unknown, i: number): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        if (typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'text' && typeof (p as { text?: unknown }).text === 'string') {
          return (p as { text: string }).text;
        }
        throw new BadRequestError(`messages[${i}].content: only text parts are supported`, { hint: 'images and files cannot be sent to an entity or a text model' });
      })
      .join('');
  }
  throw new BadRequestError(`messages[${i}].content must be a string or an array of text parts`);
}

/**
 * The client's system messages, and the rest. By default they are joined and applied to this one
 * request, after the entity's instructions, and never stored; with `strict` (serve
 * --strict-system) a text other than the instructions is refused as before. Empty ones and copies
 * of the instructions are dropped.
 */
export function splitSystem(messages: ClientMessage[], instructions: string, entityRef: string, strict: boolean): { system?: string; rest: ClientMessage[] } {
  const own = messages.filter((m) => m.role === 'system' && m.content.trim() !== '' && m.content.trim() !== instructions.trim());
  if (own.length && strict) {
    throw new BadRequestError(
      'a system message that differs from the entity\'s instructions is not accepted (this server runs with --strict-system)',
      { hint: `remove the client's system prompt, or make it the entity's: mgpt entities update ${entityRef} --instructions ...` },
    );
  }
  const rest = messages.filter((m) => m.role !== 'system');
  return own.length ? { system: own.map((m) => m.content).join('\n\n'), rest } : { rest };
}

/**
 * The conversation and the current turn's tool round: the client's messages without tool rounds
 * (assistant messages that call tools, and tool results), and those that come after the last user
 * message (the round the model is answering now), which the prompt carries but the transcript never.
 */
export function splitToolRounds(messages: ClientMessage[]): { conversation: ClientMessage[]; round: ClientMessage[] } {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const plumbing = (m: ClientMessage) => m.role === 'tool' || (m.role === 'assistant' && m.toolCalls !== undefined);
  const round = messages.slice(lastUser + 1).filter(plumbing);
  const conversation = messages.slice(0, lastUser + 1).filter((m) => !plumbing(m));
  return { conversation, round };
}
