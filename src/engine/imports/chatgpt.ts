import { type SourceConversation, type SourceMessage, fileNote, fromEpochSeconds, isObject, pathTo, shortNote, str } from './conversation.js';

// ChatGPT's data export (conversations.json): each conversation is a tree, `mapping` of nodes
// {id, message, parent, children}, and `current_node` is the leaf the user last saw. Field names
// are those of the public parsers and fixtures named in test/fixtures/imports/README.md.

type Node = { message?: unknown; parent?: unknown; children?: unknown };

/** One conversation of a ChatGPT export, on its current path. */
export function readChatGpt(raw: Record<string, unknown>, index: number): SourceConversation {
  const mapping = isObject(raw.mapping) ? (raw.mapping as Record<string, Node>) : {};
  const leaf = str(raw.current_node) ?? lastLeaf(mapping);
  const path = pathTo(leaf, (id) => {
    const p = mapping[id]?.parent;
    return typeof p === 'string' && p in mapping ? p : null;
  });
  const onPath = new Set(path);
  const messages = path.map((id) => message(id, mapping[id]?.message)).filter((m): m is SourceMessage => m !== null);
  const branchesLeftOut = Object.entries(mapping).filter(([id, n]) => !onPath.has(id) && message(id, n?.message) !== null).length;
  return {
    id: str(raw.id) ?? str(raw.conversation_id) ?? `conversation-${index + 1}`,
    title: str(raw.title) || 'Untitled',
    createdAt: fromEpochSeconds(raw.create_time),
    updatedAt: fromEpochSeconds(raw.update_time),
    messages,
    branchesLeftOut,
  };
}

/** Without current_node: from the root, always the newest child (the last one). */
function lastLeaf(mapping: Record<string, Node>): string | undefined {
  let id = Object.keys(mapping).find((k) => !mapping[k]?.parent);
  for (let steps = 0; id !== undefined && steps < 1_000_000; steps++) {
    const kids = mapping[id]?.children;
    if (!Array.isArray(kids) || kids.length === 0) return id;
    id = String(kids[kids.length - 1]);
  }
  return id;
}

/** A node's message as the transcript keeps it; null when hidden, a system message, or empty. */
function message(id: string, m: unknown): SourceMessage | null {
  if (!isObject(m)) return null;
  const role = isObject(m.author) ? str(m.author.role) : undefined;
  const meta = isObject(m.metadata) ? m.metadata : {};
  if (meta.is_visually_hidden_from_conversation === true) return null;
  if (role !== 'user' && role !== 'assistant' && role !== 'tool') return null;
  const text = contentText(isObject(m.content) ? m.content : {}, meta, role);
  if (!text) return null;
  // A tool's result (browsing, code output) is the assistant's side of the conversation.
  return { id, role: role === 'user' ? 'user' : 'assistant', text, createdAt: fromEpochSeconds(m.create_time) };
}

function contentText(c: Record<string, unknown>, meta: Record<string, unknown>, role: string): string {
  const type = str(c.content_type) ?? 'text';
  switch (type) {
    case 'text':
      return joinParts(c.parts, meta);
    case 'multimodal_text':
      return joinParts(c.parts, meta);
    case 'code':
      return role === 'tool' ? shortNote('code', str(c.text) ?? '') : '```' + (str(c.language) ?? '') + '\n' + (str(c.text) ?? '') + '\n```';
    case 'execution_output':
      return shortNote('code output', str(c.text) ?? '');
    case 'tether_browsing_display':
      return shortNote('browsing', str(c.result) ?? str(c.summary) ?? '');
    case 'tether_quote':
      return shortNote('quote', [str(c.title), str(c.url)].filter(Boolean).join(' — ') || (str(c.text) ?? ''));
    case 'system_error':
      return shortNote('error', str(c.text) ?? str(c.name) ?? '');
    // Reasoning and the user's custom instructions are not part of what the conversation showed.
    case 'thoughts':
    case 'reasoning_recap':
    case 'user_editable_context':
    case 'model_editable_context':
      return '';
    default:
      return joinParts(c.parts, meta) || (str(c.text) ?? '');
  }
}

/** Text parts as they are, an image as `[image: name]`, then the files attached that no part shows. */
function joinParts(parts: unknown, meta: Record<string, unknown>): string {
  const attachments = Array.isArray(meta.attachments) ? meta.attachments.filter(isObject) : [];
  const shown = new Set<string>();
  const out: string[] = [];
  for (const p of Array.isArray(parts) ? parts : []) {
    if (typeof p === 'string') {
      if (p) out.push(p);
    } else if (isObject(p) && str(p.content_type) === 'image_asset_pointer') {
      const pointer = str(p.asset_pointer) ?? '';
      const a = attachments.find((x) => str(x.id) !== undefined && pointer.endsWith(str(x.id)!));
      if (a) shown.add(str(a.id)!);
      out.push(`[image: ${str(a?.name) ?? (pointer.replace(/^.*\/\//, '') || 'image')}]`);
    } else if (isObject(p) && typeof p.text === 'string' && p.text) {
      out.push(p.text);
    }
  }
  const files = attachments.filter((a) => !shown.has(str(a.id) ?? '')).map((a) => fileNote('file', str(a.name), a.size));
  return [...files, ...out].join('\n\n').trim();
}
