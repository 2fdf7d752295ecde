/** Wire shapes of the universe service (seed 000) as docs/design.md#universes settles them. */

export const TEXT_ALIASES = ['game-1-lite-frozen', 'agent-1-lite-frozen', 'general-frozen-overridable'] as const;
export const OVERRIDABLE_ALIAS = 'general-frozen-overridable';
/** The text alias a universe turn uses when none is named (the CLI, batch, the REPL and the facade). */
export const UNIVERSE_MODEL: (typeof TEXT_ALIASES)[number] = 'game-1-lite-frozen';
export const IMAGE_ALIAS = 'image-1';
export const LOCAL_USER_ID = '00000000-0000-4000-8000-000000000001';
export const PREVIEW_CHARS = 280;
export const LOG_PAGE_SIZE_MAX = 100;

export interface CreateUniverseInput {
  storedPrompt: string;
  displayName?: string;
}

export interface CreatedUniverse {
  universe: string;
  userId: string;
  prompt: { storedPrompt: string; stored: true };
}

export interface ToolCallRef {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One message of `runtime.conversation` (OpenAI chat shape). */
export type RuntimeMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCallRef[] }
  | { role: 'tool'; tool_call_id: string; name?: string; content: string };

export interface ConversationTurn {
  role: 'user' | 'assistant';
  content: string;
  at?: string;
}

/** The universe document; also the inline `universeDoc` shape. */
export interface UniverseDoc {
  id?: string;
  userId?: string;
  displayName?: string;
  prompt?: { storedPrompt?: string; fingerprint?: string; text?: string };
  conversation: ConversationTurn[];
  runtime: { conversation: RuntimeMessage[] };
}

export interface UniverseSummary {
  id: string;
  userId: string;
  displayName: string | null;
  storedPrompt: string;
  messages: number;
  createdAt: string;
  updatedAt: string;
}

export interface ToolDefinitionInput {
  type: 'function';
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface ToolResultInput {
  callId: string;
  name: string;
  output: Record<string, unknown>;
  ok: boolean;
}

/** The `tool` message content a result becomes: the output, or the failure wrapped so the model sees it. */
export function toolResultContent(r: Pick<ToolResultInput, 'ok' | 'output'>): string {
  return JSON.stringify(r.ok ? r.output : { ok: false, error: r.output });
}

/** Rounds of tool calls a client runs for one turn before it gives up (respond --tool-exec, chat). */
export const MAX_TOOL_ROUNDS = 16;

export interface ToolCallOut {
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface RespondInput {
  model: string;
  modelOverride?: string;
  userInput: string;
  universe?: string;
  universeDoc?: UniverseDoc;
  statePointer?: number;
  requestId?: string;
  gameId?: string;
  workspacePreview?: boolean;
  useStructuredOutput?: boolean;
  useAdditionalInstructions?: boolean;
  responseFormat?: Record<string, unknown>;
  tools?: ToolDefinitionInput[];
  toolChoice?: 'auto' | 'none' | 'required' | { type: 'function'; name: string };
  toolResults?: ToolResultInput[];
}

export interface GenerationResponse {
  assistantRaw: string;
  previewText: string;
  promptFingerprint: string;
  nextUniverseTime: string;
  requestLog: { id: string };
  usageSettlement: { inputTokens: number; outputTokens: number; costUsd: number };
  timingBreakdown: { totalMs: number; providerMs: number };
  diagnostics: {
    summary: { inputTokens: number; outputTokens: number; totalTokens: number; latencyMs: number; model: string; mode: string };
    serverStages: { auth: number; load: number; truncate: number; promptBuild: number; provider: number };
    storage: { source: 'cache' | 'database' | 'none'; ageMs: number };
    prompt: { windowStart: number; windowMessages: number; totalMessages: number; aligned: boolean; structuredOutput: boolean };
    provider: {
      name: string;
      model: string;
      responseFormat: string | null;
      retries: number;
      called: boolean;
      /** Why the provider's reply ended (`stop`, `length` when cut, `tool_calls`); null when none was called. */
      finishReason: string | null;
    };
    /** With structured output: whether the reply is the JSON the contract asks for (never passed off as valid when cut or unparsable). */
    structured?: { valid: boolean; error: string | null };
    /** What a caller should know about a reply that still succeeded (cut off, a required tool not called). */
    warnings?: string[];
    requestId?: string;
    /** The stored response of an earlier request with this requestId, returned again (nothing was generated). */
    replayed?: boolean;
    /** The caller's X-Request-Id header, mirrored back (docs/design.md#requestid); absent when none or not sane. */
    xRequestId?: string;
  };
  toolCalls?: ToolCallOut[];
}

/** A text or image part of an image request's references. */
export type ImagePart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string } };

export interface ImageRequest {
  sceneUid: string;
  systemPrompt: string;
  description: string;
  additionalPrompt?: string;
  referenceImages?: ImagePart[];
  backgroundReference?: ImagePart;
  imageConfig?: { imageSize?: '1K' | '2K' | '4K'; aspectRatio?: string };
  model?: string;
}

export interface ImageResponse {
  sceneUid: string;
  model: string;
  images: Array<{ mimeType: string; data: string }>;
  requestLog: { id: string };
  timingBreakdown: { totalMs: number; providerMs: number };
}

export interface LogRecord {
  id: string;
  kind: 'text' | 'image';
  /** An extension: what the OpenAI facade made of the request (stateless, side, regenerated); absent on the seed's own records. */
  facade?: string;
  /** An extension: the entity whose turn this was (entity turns only). */
  entityId?: string;
  /** An extension: the route that answered an entity turn (provider, base URL, model). */
  route?: string;
  ownerUserId: string;
  userId: string;
  gameId: string | null;
  universeId: string | null;
  requestId: string | null;
  model: string;
  providerModel: string | null;
  status: string;
  error: string | null;
  inputTokens: number;
  /** An extension: of the input, what the provider's prompt cache served, when the provider said. */
  cachedInputTokens?: number;
  outputTokens: number;
  costUsd: number;
  totalMs: number;
  providerMs: number;
  createdAt: string;
}

export interface LogList {
  data: LogRecord[];
  page: number;
  pageSize: number;
  total: number;
  hasMore: boolean;
}

export interface LogDetail extends LogRecord {
  request: Record<string, unknown>;
  response: Record<string, unknown>;
}

export interface LogQuery {
  kind?: string;
  game?: string;
  user?: string;
  requestId?: string;
  page?: number;
  pageSize?: number;
}

export interface StoredPromptInfo {
  name: string;
  /** The file it was imported from; absent when it was added with `mgpt prompts add`. */
  file?: string;
  text: string;
  responseFormat?: Record<string, unknown>;
  additionalInstructions?: string;
  modifiedAt: string;
}
