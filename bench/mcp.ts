import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadTokenEstimator } from '../src/core/text/tokens.js';
import { openEngineSync } from '../src/engine/open-engine.js';
import { seedTranscript } from './seed.js';

export interface McpRun {
  messages: number;
  /** Each recall call's round trip through `mgpt mcp` on stdio, client to client. */
  recallMs: number[];
  /** Every tool result measured: its tokens and the max_tokens it was asked for. */
  results: Array<{ tool: string; tokens: number; maxTokens: number }>;
}

const QUESTIONS = ['where does my sister teach violin?', 'what was the name of the boat?', 'the lighthouse keeper journal storms', 'recipe eggs flour dough', 'when is the market?'];

/**
 * `mgpt mcp` over stdio with the SDK's own Client, on an entity of `messages` messages (a fact
 * planted every 500): recall's round trip (the target: 20 ms), and the largest result any tool
 * gives against the max_tokens it was asked for (never over it).
 */
export async function benchMcp(bin: string, work: string, messages: number, calls: number): Promise<McpRun> {
  const db = join(work, 'mcp.db');
  const engine = openEngineSync({ db });
  const e = await engine.entities.create({ model: 'mgpt-1-27b', name: 'ada' }, 'local');
  await seedTranscript(engine, e.id, messages, 40, 20, { every: 500, line: 'My sister Ingrid teaches violin at the conservatory in Zanzibar; the boat was called Albatross' });
  await engine.close();
  const env = { PATH: process.env.PATH ?? '', HOME: work, MGPT_DB: db, MGPT_CONFIG_DIR: join(work, 'mcp-config'), XDG_DATA_HOME: join(work, 'mcp-data'), NO_COLOR: '1' };
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp'], env }));
  try {
    const tok = await loadTokenEstimator();
    const text = (r: unknown) => ((r as { content: Array<{ text: string }> }).content ?? []).map((c) => c.text).join('\n');
    const recallMs: number[] = [];
    // Warm: the first call loads the tokenizer and the SQLite pages.
    await client.callTool({ name: 'recall', arguments: { entity: 'ada', query: QUESTIONS[0] } });
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      await client.callTool({ name: 'recall', arguments: { entity: 'ada', query: QUESTIONS[i % QUESTIONS.length] } });
      recallMs.push(performance.now() - t0);
    }
    const results: McpRun['results'] = [];
    for (const maxTokens of [100, 1000, 5000, 20_000]) {
      for (const [tool, args] of largeCalls(e.id)) {
        const r = await client.callTool({ name: tool, arguments: { ...args, max_tokens: maxTokens } });
        results.push({ tool, tokens: tok.count(text(r)), maxTokens });
      }
    }
    return { messages, recallMs, results };
  } finally {
    await client.close();
  }
}

/** The calls whose results could be largest: the most text each tool can give. */
function largeCalls(id: string): Array<[string, Record<string, unknown>]> {
  return [
    ['recall', { entity: id, query: 'sister violin Zanzibar boat Albatross garden lighthouse recipe' }],
    ['search', { query: 'garden', limit: 100 }],
    ['read_transcript', { entity: id, from_seq: 1 }],
    ['read_window', { entity: id }],
    ['list_entities', {}],
    ['list_rotations', { entity: id }],
  ];
}
