/**
 * The messages, tools and sampling of a chat request: what every layer passes to a model, from the
 * CLI and the wire parsers down to the providers (which re-export them from providers/spec.ts).
 */

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } };

export interface ToolDefinition {
  type: 'function';
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

/** `required`: the model must call some tool; an object names the one it must call. */
export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string };

/**
 * Sampling a caller asked for on one request (OpenAI's chat-completions fields, camel-cased). A
 * provider sends what it supports; a route's configured `maxTokens` is a ceiling a request can
 * lower but not raise.
 */
export interface Sampling {
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Other fields for the provider's request body (`-o KEY VALUE`), sent as they are by the OpenAI-compatible provider. */
  extra?: Record<string, unknown>;
}
