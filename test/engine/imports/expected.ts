import type { Backend } from '../../../src/core/backend.js';

// The transcripts the fixtures in test/fixtures/imports/ import to, message by message (shared by
// the engine tests and the remote ones: both must give exactly these).

export const FIXTURES = new URL('../../fixtures/imports/', import.meta.url).pathname;

export type Line = [role: 'user' | 'assistant', content: string];

export interface Expected {
  file: string;
  source: 'chatgpt' | 'claude' | 'openwebui';
  /** Entity name -> transcript, for the conversations that make one. */
  entities: Record<string, Line[]>;
  /** Outcomes in file order. */
  outcomes: string[];
  branches: number[];
}

export const CHATGPT: Expected = {
  file: 'chatgpt-conversations.json',
  source: 'chatgpt',
  outcomes: ['created', 'skipped', 'created'],
  branches: [3, 0, 0],
  entities: {
    'Trip plan': [
      ['user', '[file: itinerary.pdf, 1,200 bytes]\n\n[image: route-map.png]\n\nPlan a 3-day trip to Kyōto (京都) with this map — budget 800 €.'],
      [
        'assistant',
        '```unknown\nsearch("Kyoto temples")\n```\n\n[browsing: Kiyomizu-dera: wooden stage, open 6:00-18:00. Fushimi Inari: thousands of torii gates.]\n\nDay 1: Kiyomizu-dera. Day 2: Fushimi Inari. Day 3: Arashiyama. 🍵',
      ],
      ['user', 'Add a day in Nara instead.'],
      ['assistant', 'Day 4: Nara, the deer park and Tōdai-ji.'],
    ],
    'Trip plan (2)': [
      ['user', '[Imported from ChatGPT: "Trip plan", 2024-03-01]'],
      ['assistant', 'Hello! I can help you plan a trip.'],
      ['user', 'Thanks, later.'],
      ['assistant', '[no reply in the export]'],
    ],
  },
};

export const CLAUDE: Expected = {
  file: 'claude-conversations.json',
  source: 'claude',
  outcomes: ['created', 'skipped', 'created'],
  branches: [2, 0, 0],
  entities: {
    'Sourdough starter': [
      ['user', "[attachment: starter-log.txt, 2,048 bytes]\n\n[file: jar.jpg]\n\nMy starter smells like acetone. Is it dead?\n\nAlso: it's 18 °C in my kitchen — Größe des Glases 1 l."],
      ['assistant', '[tool: web_search]\n\n[tool result web_search: Acetone smell: the starter is hungry.]\n\nIt is hungry, not dead: feed it twice a day.'],
      ['user', 'How warm should it be? 🌡️'],
      ['assistant', 'Around 24–26 °C.'],
    ],
    'Bash Command for OpenAI API': [
      ['user', '[Imported from Claude: "Bash Command for OpenAI API", 2024-04-04]'],
      ['assistant', 'To turn this into a bash command, quote the JSON.'],
      ['user', '[file: CleanShot 2024-04-04.png]\n\nThanks'],
      ['assistant', "You're welcome."],
    ],
  },
};

export const OPENWEBUI: Expected = {
  file: 'openwebui-chat-export.json',
  source: 'openwebui',
  outcomes: ['created', 'skipped', 'created'],
  branches: [1, 0, 0],
  entities: {
    'Time zones': [
      ['user', 'Wie spät ist es in Tōkyō?\n\n[image]\n\nAnd give me the offset to UTC.'],
      ['assistant', 'Tokyo is UTC+9 — 東京は UTC+9 です。'],
      ['user', '[file: schedule.csv, 512 bytes]\n\nThanks!'],
      ['assistant', "You're welcome."],
    ],
    Arithmetic: [
      ['user', '[Imported from Open WebUI: "Arithmetic", 2024-05-01]'],
      ['assistant', 'Welcome back! Ask me anything.'],
      ['user', 'What is 2+2?'],
      ['assistant', '4'],
    ],
  },
};

export const ALL = [CHATGPT, CLAUDE, OPENWEBUI];

/** Every entity of the account by name, with its transcript as [role, content] lines. */
export async function transcripts(backend: Backend): Promise<Record<string, Line[]>> {
  const out: Record<string, Line[]> = {};
  for (const e of (await backend.listEntities({ limit: 200 })).data) {
    const page = await backend.listMessages(e.id, { limit: 500 });
    out[e.name] = page.data.map((m) => [m.role, m.content] as Line);
  }
  return out;
}
