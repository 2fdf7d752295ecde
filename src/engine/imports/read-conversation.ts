import { type ChatSource, IMPORT_MESSAGE_MAX_BYTES } from '../../core/wire/chat-import.js';
import { BadRequestError } from '../../core/errors.js';
import { readChatGpt } from './chatgpt.js';
import { readClaude } from './claude.js';
import { type SourceConversation, isObject } from './conversation.js';
import { type RawValue, parseJsonValue } from './json-stream.js';
import { readOpenWebUi } from './openwebui.js';

/** A conversation read from its bytes, and the format it was read as. */
export interface ReadValue {
  conversation: SourceConversation;
  source: ChatSource;
}

const READERS: Record<ChatSource, (raw: Record<string, unknown>, index: number) => SourceConversation> = {
  chatgpt: readChatGpt,
  claude: readClaude,
  openwebui: readOpenWebUi,
};

/**
 * One conversation from its bytes: parsed, checked to be of `source` (told from it when auto),
 * read into the common shape, and refused whole when a message is over the size cap. Pure, so
 * a large one can be read on a worker thread (reader-pool.ts) and a small one here.
 */
export function readConversation(raw: RawValue, source: ChatSource | 'auto', what: string): ReadValue {
  const value = parseJsonValue(raw, what);
  const where = `conversation ${raw.count} (at byte ${raw.offset})`;
  if (!isObject(value)) throw new BadRequestError(`import: ${where} is not an object`);
  const s = source === 'auto' ? detect(value) : source;
  if (!fits(value, s)) throw notA(s, where);
  const conversation = READERS[s](value, raw.count - 1);
  const refused = oversized(conversation);
  return { source: s, conversation: refused === undefined ? conversation : { ...conversation, messages: [], refused } };
}

/**
 * Why a conversation may not be imported: a transcript message over the cap a sent message has.
 * Consecutive messages from one side become one transcript message (plan.ts), so a run is
 * measured whole. The conversation is refused rather than cut: nothing of it is silently lost.
 */
export function oversized(c: SourceConversation): string | undefined {
  let run = 0;
  let from = 0;
  for (let i = 0; i < c.messages.length; i++) {
    const m = c.messages[i];
    const bytes = Buffer.byteLength(m.text, 'utf8');
    if (i > 0 && m.role === c.messages[i - 1].role) run += 2 + bytes;
    else (run = bytes), (from = i);
    if (run <= IMPORT_MESSAGE_MAX_BYTES) continue;
    const which = from === i ? `message ${i + 1}` : `messages ${from + 1}-${i + 1} (one side's, joined into one)`;
    return `${which} ${from === i ? 'holds' : 'hold'} ${mib(run)} MiB, over the ${mib(IMPORT_MESSAGE_MAX_BYTES)} MiB a message may hold (as a sent one): nothing of this conversation is imported`;
  }
  return undefined;
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1);
}

/** Which tool's export this conversation comes from, by the fields only that tool writes. */
export function detect(first: unknown): ChatSource {
  if (first === undefined) {
    throw new BadRequestError('import: the export holds no conversations, so its format cannot be told', { hint: 'name it with --from chatgpt|claude|openwebui' });
  }
  for (const s of ['chatgpt', 'claude', 'openwebui'] as const) if (isObject(first) && fits(first, s)) return s;
  if (isObject(first) && 'manifest' in first) {
    throw new BadRequestError('import: this is an mgpt export, not a chat export', { hint: 'mgpt import FILE --from mgpt' });
  }
  throw new BadRequestError('import: cannot tell which tool made this export (no mapping, chat_messages or chat.history)', {
    hint: 'mgpt imports ChatGPT (conversations.json or the .zip), Claude (conversations.json) and Open WebUI (chat-export-*.json); name it with --from',
  });
}

function fits(c: Record<string, unknown>, source: ChatSource): boolean {
  if (source === 'chatgpt') return isObject(c.mapping);
  if (source === 'claude') return Array.isArray(c.chat_messages);
  const chat = isObject(c.chat) ? c.chat : c;
  return isObject(chat.history) || (Array.isArray(chat.messages) && 'title' in c);
}

function notA(source: ChatSource, where: string): BadRequestError {
  const field = { chatgpt: 'mapping', claude: 'chat_messages', openwebui: 'chat.history' }[source];
  return new BadRequestError(`import: ${where} has no ${field}: this is not a ${source} export`, { hint: 'leave out --from to let mgpt tell' });
}
