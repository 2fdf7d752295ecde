/**
 * OpenAI's Responses and Conversations objects as mgpt answers them (docs/openai-clients.md#the-responses-api),
 * the fields the official `openai` package types (test/fixtures/responses/README.md names the
 * version and files). Only the shapes mgpt produces: text messages and function calls.
 */

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
}

export interface InputText {
  type: 'input_text';
  text: string;
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface MessageItem {
  id: string;
  type: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  status: ItemStatus;
  content: Array<OutputText | InputText>;
}

export interface FunctionCallItem {
  id: string;
  type: 'function_call';
  status: ItemStatus;
  call_id: string;
  name: string;
  arguments: string;
}

export interface FunctionCallOutputItem {
  id: string;
  type: 'function_call_output';
  status: ItemStatus;
  call_id: string;
  output: string;
}

export type OutputItem = MessageItem | FunctionCallItem;
/** What input_items and conversation items list. */
export type WireItem = MessageItem | FunctionCallItem | FunctionCallOutputItem;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** A function tool as the Responses API takes it (flat, not under `function`). */
export interface ResponseFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: null;
  store: boolean;
  temperature: number | null;
  text: { format: { type: 'text' } };
  tool_choice: unknown;
  tools: ResponseFunctionTool[];
  top_p: number | null;
  truncation: 'auto' | 'disabled';
  usage: ResponseUsage | null;
  metadata: Record<string, string>;
  conversation: { id: string } | null;
  /** Not OpenAI's: the SDK computes output_text itself, so this is ours, for a client that reads the JSON. */
  output_text?: string;
}

type Seq = { sequence_number: number };
type ItemAt = { item_id: string; output_index: number };

/** The streamed events, in the order test/fixtures/responses/*.events.json record. */
export type ResponseEvent =
  | ({ type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed'; response: ResponseObject } & Seq)
  | ({ type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: OutputItem } & Seq)
  | ({ type: 'response.content_part.added' | 'response.content_part.done'; content_index: number; part: OutputText } & ItemAt & Seq)
  | ({ type: 'response.output_text.delta'; content_index: number; delta: string; logprobs: never[] } & ItemAt & Seq)
  | ({ type: 'response.output_text.done'; content_index: number; text: string; logprobs: never[] } & ItemAt & Seq)
  | ({ type: 'response.function_call_arguments.delta'; delta: string } & ItemAt & Seq)
  | ({ type: 'response.function_call_arguments.done'; name: string; arguments: string } & ItemAt & Seq)
  | ({ type: 'error'; code: string | null; message: string; param: null } & Seq);

export interface DeletedResponse {
  id: string;
  object: 'response';
  deleted: true;
}

/** POST /v1/responses/compact: the entity's rotation, told as OpenAI's compaction. */
export interface CompactedResponse {
  id: string;
  object: 'response.compaction';
  created_at: number;
  output: Array<MessageItem | { id: string; type: 'compaction'; encrypted_content: string }>;
  usage: ResponseUsage;
}

export interface Conversation {
  id: string;
  object: 'conversation';
  created_at: number;
  metadata: Record<string, string>;
}

export interface DeletedConversation {
  id: string;
  object: 'conversation.deleted';
  deleted: true;
}

export interface ItemList<T = WireItem> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}
