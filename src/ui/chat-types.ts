import type { CutLimit } from './finish-notice.js';
import type { Backend, LocalAdmin } from '../core/backend.js';
import type { ToolCallOut, ToolDefinitionInput, ToolResultInput } from '../core/wire/universe-types.js';

/** What `mgpt chat` talks to. */
export type ChatTarget = { kind: 'entity'; id: string } | { kind: 'universe'; id: string };

export type ChatItem = { id: number } & (
  | { kind: 'user'; text: string }
  /** cancelled: a reply cut short by Ctrl-C, shown as far as it came but not stored. */
  | { kind: 'assistant'; text: string; cancelled?: boolean }
  | { kind: 'notice'; text: string }
  | { kind: 'error'; text: string; hint?: string; exitCode?: number }
  | { kind: 'output'; text: string }
);

/** An item before the controller numbers it. */
export type NewItem = ChatItem extends infer T ? (T extends ChatItem ? Omit<T, 'id'> : never) : never;

export interface ChatStatus {
  kind: 'entity' | 'universe';
  id: string;
  label: string;
  /** The entity's model, or the universe model alias. */
  model?: string;
  /** Who answers `model` here: provider and model (local backend only). */
  route?: string;
  backend: string;
  /** `budget` is the limit that binds: the window's budget, or the model's context (`byModel`) when smaller. */
  window?: { tokens: number; budget: number; byModel?: boolean; blocks: number };
  /**
   * What the next prompt is made of, in estimated tokens: the head (instructions and
   * pinned memory, `memory` of it), the summaries and the live messages of the window, and what
   * is kept for the reply when the route's maxTokens is known here (the local backend).
   */
  split?: { head: number; memory: number; summaries: number; live: number; recalled?: number; reserve?: number };
  transcript?: { messages: number; tokens: number; cap: number };
  readOnly?: boolean;
  /** null or absent: not metered. */
  balanceUsd?: number | null;
}

export interface ChatState {
  items: ChatItem[];
  /** The reply streaming in; null when no turn is running. */
  streaming: string | null;
  busy: boolean;
  status: ChatStatus;
  /** Universe tool calls waiting for the person to type their results, first one next. */
  pendingTools: ToolCallOut[];
  exited: boolean;
}

/** Where the REPL reads and writes: the wire API, and the engine's universe reads when it is local. */
export interface ChatSources {
  backend: Backend;
  /** Only with the local backend: universes are read back (status, /window, /history, /switch) through it. */
  admin?: LocalAdmin;
}

export interface ChatOptions extends ChatSources {
  target: ChatTarget;
  /** Universe turns: the model alias (default game-1-lite-frozen). */
  model?: string;
  tools?: ToolDefinitionInput[];
  /** Runs a universe tool call (`--tool-exec`); without it the person is asked for the result. */
  runTool?: (call: ToolCallOut) => Promise<ToolResultInput>;
  /** The account balance (null when not metered); absent when the backend cannot tell. */
  balance?: () => Promise<number | null>;
  /** Instructions for entities made with `/new`. */
  instructions?: string;
  /** Entity turns offer the model `remember` (`--memory-tool`) or do not (`--no-memory-tool`); absent: the entity's own setting. */
  memoryTool?: boolean;
  /** On a terminal: `/history` says when each message was written ("3 min ago"). */
  humanTimes?: boolean;
  /** The clock for humanTimes (default Date.now). */
  now?: () => number;
  /** What `~` in a path means (default: the user's home directory). */
  home?: string;
  /** The reply-length limit turns on a model run under, to say which limit cut a reply (the local backend knows it). */
  cutLimit?: (model: string) => CutLimit | undefined;
  /** The provider and model an entity's model routes to here (`openai gpt-4o-mini`), for the status line; the local backend knows it. */
  route?: (model: string) => string | undefined;
  /** Shown under the greeting (e.g. that no real model is configured). */
  notices?: string[];
}
