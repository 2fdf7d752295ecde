import { createWriteStream } from 'node:fs';

/** One conversation as ChatGPT's export writes it (a mapping chain to its current node). */
export interface ChatgptConversation {
  id: string;
  title: string;
  /** Epoch seconds; its messages are a second apart from it. */
  at: number;
  /** The texts, user first, alternating. */
  texts: string[];
}

export function chatgptConversation(c: ChatgptConversation): string {
  const nodes: string[] = [`"root":{"id":"root","message":null,"parent":null,"children":["${c.id}-0"]}`];
  c.texts.forEach((text, i) => {
    const id = `${c.id}-${i}`;
    const kids = i + 1 < c.texts.length ? [`${c.id}-${i + 1}`] : [];
    const role = i % 2 ? 'assistant' : 'user';
    const msg = `{"id":"${id}","author":{"role":"${role}"},"create_time":${c.at + i},"content":{"content_type":"text","parts":[${JSON.stringify(text)}]}}`;
    nodes.push(`"${id}":{"id":"${id}","message":${msg},"parent":"${i ? `${c.id}-${i - 1}` : 'root'}","children":${JSON.stringify(kids)}}`);
  });
  const last = `${c.id}-${c.texts.length - 1}`;
  return `{"title":${JSON.stringify(c.title)},"create_time":${c.at},"update_time":${c.at + c.texts.length},"id":"${c.id}","current_node":"${last}","mapping":{${nodes.join(',')}}}`;
}

/** Writes a ChatGPT conversations.json of `n` conversations, streamed (it may be large). */
export async function writeChatgptExport(file: string, n: number, each: (i: number) => ChatgptConversation): Promise<void> {
  const out = createWriteStream(file);
  const write = async (s: string) => {
    if (!out.write(s)) await new Promise<void>((r) => out.once('drain', r));
  };
  await write('[');
  for (let i = 0; i < n; i++) await write((i ? ',\n' : '') + chatgptConversation(each(i)));
  await write(']\n');
  await new Promise<void>((r, j) => out.end((err?: Error | null) => (err ? j(err) : r())));
}
