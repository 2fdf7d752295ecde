import { BadRequestError } from '../../core/errors.js';
import type { ClientMessage } from './chat-facade.js';

/**
 * What the facade does with a request to an `entity:` model (docs/openai-clients.md#use-mgpt-from-open-webui-or-any-openai-client),
 * decided from the messages alone, without HTTP or storage:
 *
 * - a **side request** (a client's title, tags, follow-up or query prompt) is answered in the
 *   entity's voice and never stored;
 * - a **new message** (the client's history is the end of the transcript) is a stored turn;
 * - a **regenerate** (the history ends with the transcript's last user message, without its
 *   reply) is answered again without storing the message twice;
 * - anything else (an edited message, another entity's chat) **contradicts** the transcript.
 */
export type TurnKind = 'stored' | 'side' | 'regenerated' | 'branched' | 'stateless' | 'tool_calls';

/**
 * What a turn became once its reply is known: a reply that calls tools is returned, not stored
 * (nor its branch created), so a turn that would have been stored says `tool_calls`.
 */
export function turnOf(kind: TurnKind, finish: string | null | undefined): TurnKind {
  return finish === 'tool_calls' && (kind === 'stored' || kind === 'branched') ? 'tool_calls' : kind;
}

/** The response header that says which of these a request became. */
export const TURN_HEADER = 'Mgpt-Turn';
/** The request header that marks a side request a client's text does not give away: `Mgpt-Request: side`. */
export const REQUEST_HEADER = 'Mgpt-Request';

/**
 * The side requests of the clients we know, by the text their templates start with (each from the
 * client's own source, recorded in test/fixtures/clients/ with its version and file).
 */
export const KNOWN_SIDE_PATTERNS: readonly RegExp[] = [
  // Open WebUI: every task prompt (title, tags, follow-ups, queries, autocomplete, emoji).
  /^\s*### Task:/,
  // Chatbox: the chat's name.
  /^\s*Based on the chat history, give this conversation a name\./,
  // Continue: the chat's title (ChatDescriber).
  /^\s*Given the following\.\.\. please reply with a title for the chat/,
  // LibreChat (@librechat/agents): the title, by the completion and the structured method.
  /^\s*Provide a concise, 5-word-or-less title for the conversation/,
  /^\s*Analyze this conversation and provide:\s*1\. The detected language of the conversation/,
];

/** Whether the request is a side request: the header says so, or its last user message matches a pattern. */
export function isSideRequest(messages: readonly ClientMessage[], patterns: readonly RegExp[], header?: string): boolean {
  if ((header ?? '').trim().toLowerCase() === 'side') return true;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return last !== undefined && patterns.some((p) => p.test(last.content));
}

/** Text as a client may resend it: line ends and surrounding whitespace do not count. */
export function normalize(text: string): string {
  return text.replace(/\r\n?/g, '\n').trim();
}

/** One transcript message, as alignment needs it. */
export interface SeenMessage {
  seq: number;
  role: 'user' | 'assistant';
  content: string;
}

export type Alignment =
  | { kind: 'new'; content: string }
  | { kind: 'regenerate'; content: string }
  /** The history does not end where the transcript does; `divergence` is the first client message found nowhere in it. */
  | { kind: 'conflict'; message: string; divergence: number };

/**
 * Lines the client's conversation (system messages and tool rounds removed) up with the END of
 * the transcript: a client chat is the messages since that chat began, so its history must equal
 * the transcript's last messages. The user's own messages are compared (normalised); the model's
 * replies are not, because clients regenerate, trim and re-render them. `tail` holds the
 * transcript's last messages (at least `conversation.length + 1` of them, or all).
 */
export function align(conversation: readonly ClientMessage[], tail: readonly SeenMessage[], transcriptLength: number): Alignment {
  const last = conversation[conversation.length - 1];
  const history = conversation.slice(0, -1);
  checkTurns(conversation);
  // A regenerate: the whole conversation is the transcript without its last reply. A lone message
  // equal to the last one answered is taken for the regenerate of a chat's first reply.
  const answered = tail.length > 0 && tail[tail.length - 1].role === 'assistant' ? tail.slice(0, -1) : undefined;
  const regenerates = answered !== undefined && endsWith(answered, conversation);
  if (regenerates && history.length === 0) return { kind: 'regenerate', content: last.content };
  if (endsWith(tail, history)) return { kind: 'new', content: last.content };
  if (regenerates) return { kind: 'regenerate', content: last.content };
  return conflict(conversation, tail, transcriptLength);
}

/** Whether `suffix`'s user messages are the last user messages of `messages`, turn for turn. */
function endsWith(messages: readonly SeenMessage[], suffix: readonly ClientMessage[]): boolean {
  if (suffix.length > messages.length) return false;
  const offset = messages.length - suffix.length;
  return suffix.every((m, i) => {
    const t = messages[offset + i];
    return t.role === m.role && (m.role !== 'user' || normalize(t.content) === normalize(m.content));
  });
}

function conflict(conversation: readonly ClientMessage[], tail: readonly SeenMessage[], transcriptLength: number): Alignment {
  const said = new Set(tail.filter((m) => m.role === 'user').map((m) => normalize(m.content)));
  const found = conversation.findIndex((m, i) => i < conversation.length - 1 && m.role === 'user' && !said.has(normalize(m.content)));
  const divergence = found === -1 ? conversation.length - 1 : found;
  const m = conversation[divergence];
  const where = found === -1 ? 'the history is not the end of the transcript' : `message ${divergence} (user) is not in it: ${preview(m.content)}`;
  return { kind: 'conflict', divergence, message: `the conversation does not continue the entity's transcript (${transcriptLength} messages): ${where}` };
}

/** A conversation of whole turns: user, assistant, ..., ending with the new user message. */
function checkTurns(conversation: readonly ClientMessage[]): void {
  conversation.forEach((m, i) => {
    const want = i % 2 === 0 ? 'user' : 'assistant';
    if (m.role === want) return;
    throw new BadRequestError(`messages must alternate user and assistant, starting with user; message ${i} is ${m.role}`, {
      hint: 'system messages and tool rounds may come anywhere; the rest is the chat, one reply after each user message',
    });
  });
}

function preview(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}...` : s);
}
