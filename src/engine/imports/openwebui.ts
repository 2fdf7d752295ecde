import { type SourceConversation, type SourceMessage, fileNote, fromEpochSeconds, isObject, pathTo, str } from './conversation.js';

// Open WebUI's chat export (Settings > Chats > Export: a JSON array of its chat rows): each row
// {id, title, chat, created_at, updated_at} (epoch seconds) holds `chat.history.messages` (by id:
// {id, parentId, childrenIds, role, content, timestamp, files}) and `chat.history.currentId`, the
// message the user last saw; Open WebUI itself walks parentId from it (createMessagesList).
// Sources: test/fixtures/imports/README.md.

/** One chat of an Open WebUI export, on its current path. */
export function readOpenWebUi(raw: Record<string, unknown>, index: number): SourceConversation {
  const chat = isObject(raw.chat) ? raw.chat : raw;
  const history = isObject(chat.history) ? chat.history : {};
  const byId = isObject(history.messages) ? (history.messages as Record<string, unknown>) : {};
  let path: Record<string, unknown>[];
  if (Object.keys(byId).length > 0) {
    path = pathTo(str(history.currentId), (id) => {
      const m = byId[id];
      const p = isObject(m) ? str(m.parentId) : undefined;
      return p && p in byId ? p : null;
    }).map((id) => byId[id]).filter(isObject);
  } else {
    // An old chat without history: its linear `messages`.
    path = (Array.isArray(chat.messages) ? chat.messages : []).filter(isObject);
  }
  const kept = new Set(path);
  const messages = path.map(message).filter((m): m is SourceMessage => m !== null);
  return {
    id: str(raw.id) ?? str(chat.id) ?? `chat-${index + 1}`,
    title: str(raw.title) || str(chat.title) || 'Untitled',
    createdAt: fromEpochSeconds(raw.created_at ?? chat.timestamp),
    updatedAt: fromEpochSeconds(raw.updated_at),
    messages,
    branchesLeftOut: Object.values(byId).filter((m) => isObject(m) && !kept.has(m) && message(m) !== null).length,
  };
}

function message(m: Record<string, unknown>): SourceMessage | null {
  const role = str(m.role);
  if (role !== 'user' && role !== 'assistant') return null;
  const files = (Array.isArray(m.files) ? m.files : []).filter(isObject).map((f) => fileNote(str(f.type) === 'image' ? 'image' : 'file', str(f.name), f.size));
  const text = [...files, (str(m.content) ?? '').trim()].filter(Boolean).join('\n\n');
  if (!text) return null;
  return { id: str(m.id) ?? '', role, text, createdAt: fromEpochSeconds(m.timestamp) };
}
