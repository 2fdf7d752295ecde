import { type SourceConversation, type SourceMessage, fileNote, fromIso, isObject, pathTo, shortNote, str } from './conversation.js';

// Claude's data export (conversations.json): each conversation has `chat_messages`, each with
// `sender` human/assistant, `text` and (newer exports) `content` blocks, `attachments` (file_name,
// file_size, extracted_content) and `files` (file_name). Where messages carry
// `parent_message_uuid` and the conversation `current_leaf_message_uuid`, the path to that leaf
// is taken (edited branches left out); otherwise the list order. Sources: test/fixtures/imports/README.md.

/** One conversation of a Claude export. */
export function readClaude(raw: Record<string, unknown>, index: number): SourceConversation {
  const all = (Array.isArray(raw.chat_messages) ? raw.chat_messages : []).filter(isObject);
  const path = currentPath(all, str(raw.current_leaf_message_uuid));
  const messages = path.map(message).filter((m): m is SourceMessage => m !== null);
  const kept = new Set(path);
  return {
    id: str(raw.uuid) ?? `conversation-${index + 1}`,
    title: str(raw.name) || 'Untitled',
    createdAt: fromIso(raw.created_at),
    updatedAt: fromIso(raw.updated_at),
    messages,
    branchesLeftOut: all.filter((m) => !kept.has(m) && message(m) !== null).length,
  };
}

function currentPath(all: Record<string, unknown>[], leaf: string | undefined): Record<string, unknown>[] {
  const byId = new Map(all.map((m) => [str(m.uuid) ?? '', m]));
  if (!leaf || !byId.has(leaf)) return all;
  return pathTo(leaf, (id) => {
    const p = str(byId.get(id)?.parent_message_uuid);
    return p && byId.has(p) ? p : null;
  }).map((id) => byId.get(id)!);
}

function message(m: Record<string, unknown>): SourceMessage | null {
  const sender = str(m.sender);
  if (sender !== 'human' && sender !== 'assistant') return null;
  const blocks = Array.isArray(m.content) ? m.content.filter(isObject) : [];
  const body = blocks.length ? blocks.map(blockText).filter(Boolean).join('\n\n') : (str(m.text) ?? '');
  const notes = [
    ...(Array.isArray(m.attachments) ? m.attachments.filter(isObject) : []).map((a) => fileNote('attachment', str(a.file_name), a.file_size)),
    ...(Array.isArray(m.files) ? m.files.filter(isObject) : []).map((f) => fileNote('file', str(f.file_name), undefined)),
  ];
  const text = [...notes, body.trim()].filter(Boolean).join('\n\n');
  if (!text) return null;
  return { id: str(m.uuid) ?? '', role: sender === 'human' ? 'user' : 'assistant', text, createdAt: fromIso(m.created_at) };
}

/** A content block: text as it is, a tool's use and result as short notes; thinking is not shown. */
function blockText(b: Record<string, unknown>): string {
  switch (str(b.type)) {
    case 'text':
      return str(b.text) ?? '';
    case 'tool_use':
      return `[tool: ${str(b.name) ?? 'unnamed'}]`;
    case 'tool_result':
      return shortNote(`tool result${str(b.name) ? ' ' + str(b.name) : ''}`, resultText(b.content));
    default:
      return '';
  }
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.filter(isObject).map((c) => str(c.text) ?? '').join(' ');
}
