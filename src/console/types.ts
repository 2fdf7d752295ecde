/** The API's shapes the console's pages share (as the server sends them). */
export interface Entity {
  id: string;
  name: string;
  instructions: string;
  model: string;
  read_only: boolean;
  recall?: string;
  /** Present once the entity route offers it: the tokens recall may bring into a turn (null: the default). */
  recall_tokens?: number | null;
  /** Present when on: every turn offers the model `remember`. */
  memory_tool?: true;
  transcript: { messages: number; tokens: number; cap_tokens: number };
  window: { budget_tokens: number; tokens?: number; blocks?: number; model_limit_tokens?: number };
  updated_at: string;
}

export interface Block {
  id: string;
  kind: 'summary' | 'message';
  role: string;
  content: string;
  tokens: number;
  covers: [number, number];
}

export interface EntityWindow {
  budget_tokens: number;
  tokens: number;
  blocks: Block[];
  model_limit_tokens?: number;
}

/** GET /v1/entities/{id}/memory: the pinned blocks and their limits. */
export interface Memory {
  memory: Array<{ label: string; text: string; tokens: number; updated_at: string }>;
  tokens: number;
  limits: { blocks: number; tokens: number };
}

/** `GET …/window?prompt=true`: the window, and every part of the next request with its tokens. */
export interface WindowPrompt extends EntityWindow {
  prompt_tokens: number;
  parts: Record<'instructions' | 'memory' | 'summaries' | 'messages', { tokens: number; blocks: number }> & {
    recalled: { tokens: number; blocks: number; lines: Array<{ seq: number; role: string; tokens: number; content?: string }> };
  };
}
