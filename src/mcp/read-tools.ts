import { LIST_MESSAGES_MAX, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, type WindowBlock } from '../core/wire/entity-types.js';
import { BadRequestError } from '../core/errors.js';
import { SEARCH_QUERY_MAX_CHARS } from '../core/text/search-query.js';
import { CURSOR_ARG, ENTITY_ARG } from './args.js';
import { MAX_TOKENS_ARG, fitLines, maxTokensOf } from './budget.js';
import { cursorInt, cursorText, makeCursor, moreLine, readCursor } from './cursor.js';
import { entityPage, pageStart } from './paging.js';
import { type Tool, type ToolContext, minute } from './tool.js';

const QUERY_ARG = { type: 'string', description: 'what to look for', maxLength: SEARCH_QUERY_MAX_CHARS } as const;

export const listEntities: Tool = {
  name: 'list_entities',
  title: 'List entities',
  description: 'List the entities (long-lived conversations with memory) on this account, most recently active first: name, id, how many messages, when each last changed. Pass a name or id as `entity` to the other tools.',
  args: { properties: { cursor: CURSOR_ARG, max_tokens: MAX_TOKENS_ARG }, required: [] },
  readOnly: true,
  async run(ctx, args) {
    const from = args.cursor === undefined ? 0 : cursorInt('list_entities', readCursor('list_entities', args.cursor as string), 'at');
    const { data } = await ctx.backend.listEntities();
    const rest = data.slice(from);
    const lines = rest.map((e) => `${e.name || '(no name)'} · ${e.id} · ${e.transcript.messages} messages · updated ${minute(e.updated_at)}`);
    const next = (taken: number) => (from + taken < data.length ? makeCursor('list_entities', { at: from + taken }) : undefined);
    const head = data.length ? `${data.length} ${data.length === 1 ? 'entity' : 'entities'}${from ? `, from the ${from + 1}th` : ''}:` : 'no entities yet: create one with `mgpt entities create --name NAME`';
    const fitted = await fitLines(head, lines, maxTokensOf(args), (taken) => moreLine(next(taken), 'entities'));
    const entities = rest.slice(0, fitted.taken).map((e) => ({ id: e.id, name: e.name, messages: e.transcript.messages, updated_at: e.updated_at }));
    const cursor = next(fitted.taken);
    return { text: fitted.text, structured: { entities, tokens: fitted.tokens, ...(cursor ? { next_cursor: cursor } : {}) } };
  },
};

export const recall: Tool = {
  name: 'recall',
  title: 'Recall',
  description:
    "Find what an entity's whole transcript says about something, ranked by relevance (any word of the query, by its stem), each hit with the other half of its exchange, " +
    'within max_tokens. Lines read `#seq role (date): text`, in transcript order. Use it to answer from what was said long ago; use search for exact words.',
  args: { properties: { entity: ENTITY_ARG, query: QUERY_ARG, max_tokens: MAX_TOKENS_ARG }, required: ['entity', 'query'] },
  readOnly: true,
  async run(ctx, args) {
    const entity = await ctx.backend.resolveEntity(args.entity as string);
    const found = await ctx.backend.recall(entity.id, { q: args.query as string, max_tokens: maxTokensOf(args) });
    const text = found.text || `nothing in the transcript of ${entity.name || entity.id} matches ${JSON.stringify(args.query)}`;
    return { text, structured: { entity_id: entity.id, tokens: found.tokens, messages: found.messages } };
  },
};

export const search: Tool = {
  name: 'search',
  title: 'Search transcripts',
  description:
    'Search the transcripts of every entity (or one) for exact words, "a quoted phrase" or a prefix*: every word must match. Most relevant first; each hit is `entity #seq role (date): snippet`. ' +
    'Pages: pass the returned cursor to read on. Read a hit in full with read_transcript from_seq.',
  args: {
    properties: {
      query: QUERY_ARG,
      entity: { ...ENTITY_ARG, description: 'only this entity (name, id or unique id prefix); all of them when absent' },
      limit: { type: 'integer', description: `hits per page, 1-${SEARCH_LIMIT_MAX} (default ${SEARCH_LIMIT_DEFAULT})`, minimum: 1, maximum: SEARCH_LIMIT_MAX },
      cursor: CURSOR_ARG,
      max_tokens: MAX_TOKENS_ARG,
    },
    required: ['query'],
  },
  readOnly: true,
  run: runSearch,
};

/** The hits of one page. The store ranks the 100 best at most, so paging ends there. */
async function runSearch(ctx: ToolContext, args: Record<string, unknown>) {
  const q = args.query as string;
  const entityId = args.entity === undefined ? '' : (await ctx.backend.resolveEntity(args.entity as string)).id;
  const offset = searchOffset(args, q, entityId);
  const limit = (args.limit as number | undefined) ?? SEARCH_LIMIT_DEFAULT;
  const want = Math.min(SEARCH_LIMIT_MAX, offset + limit);
  const all = offset >= SEARCH_LIMIT_MAX ? [] : (await ctx.backend.search({ q, ...(entityId ? { entity_ids: [entityId] } : {}), limit: want })).data;
  const hits = all.slice(offset, offset + limit);
  const mayHaveMore = all.length === want && want < SEARCH_LIMIT_MAX;
  const next = (taken: number) => (offset + taken < all.length || (taken === hits.length && mayHaveMore) ? makeCursor('search', { q, e: entityId, at: offset + taken }) : undefined);
  const lines = hits.map((h) => `${h.entity_name || h.entity_id} #${h.seq} ${h.role} (${minute(h.created_at)}): ${h.snippet}`);
  const head = hits.length ? `matches for ${JSON.stringify(q)}${offset ? `, from the ${offset + 1}th` : ''}:` : offset ? `no more matches for ${JSON.stringify(q)}` : `no matches for ${JSON.stringify(q)}`;
  const fitted = await fitLines(head, lines, maxTokensOf(args), (taken) => moreLine(next(taken), 'matches'));
  const shown = hits.slice(0, fitted.taken).map((h) => ({ entity_id: h.entity_id, entity_name: h.entity_name, seq: h.seq, role: h.role, created_at: h.created_at, snippet: h.snippet }));
  const cursor = next(fitted.taken);
  return { text: fitted.text, structured: { hits: shown, tokens: fitted.tokens, ...(cursor ? { next_cursor: cursor } : {}) } };
}

function searchOffset(args: Record<string, unknown>, q: string, entityId: string): number {
  if (args.cursor === undefined) return 0;
  const state = readCursor('search', args.cursor as string);
  if (cursorText('search', state, 'q') !== q || cursorText('search', state, 'e') !== entityId) {
    throw new BadRequestError('search: the cursor belongs to another query', { hint: 'pass the same query and entity as the call that gave it, or start again without cursor' });
  }
  return cursorInt('search', state, 'at');
}

export const readTranscript: Tool = {
  name: 'read_transcript',
  title: 'Read a transcript',
  description: "Read an entity's transcript (every message ever written, kept forever) from a message number on, as `#seq role (date): text` lines, within max_tokens; the cursor reads on.",
  args: {
    properties: { entity: ENTITY_ARG, from_seq: { type: 'integer', description: 'the first message to read (default 1)', minimum: 1, maximum: Number.MAX_SAFE_INTEGER }, cursor: CURSOR_ARG, max_tokens: MAX_TOKENS_ARG },
    required: ['entity'],
  },
  readOnly: true,
  async run(ctx, args) {
    const entity = await ctx.backend.resolveEntity(args.entity as string);
    const from = pageStart('read_transcript', args, entity, ((args.from_seq as number | undefined) ?? 1) - 1);
    const page = await ctx.backend.listMessages(entity.id, { after: from, limit: LIST_MESSAGES_MAX });
    const lines = page.data.map((m) => `#${m.seq} ${m.role} (${minute(m.created_at)}): ${m.content}`);
    const total = entity.transcript.messages;
    const head = lines.length ? `${entity.name || entity.id}: messages from #${from + 1} of ${total}` : `${entity.name || entity.id} has no messages after #${from} (${total} in all)`;
    return entityPage({ tool: 'read_transcript', entity, head, lines, first: from, total, what: 'messages' }, args);
  },
};

export const readWindow: Tool = {
  name: 'read_window',
  title: 'Read the window',
  description: "Read what an entity's model sees now (or saw when it answered message `at`): summary blocks of folded messages, then the live messages, within max_tokens.",
  args: {
    properties: { entity: ENTITY_ARG, at: { type: 'string', description: 'a message number, or a date with a zone: the window the model saw when it answered that message', maxLength: 64 }, cursor: CURSOR_ARG, max_tokens: MAX_TOKENS_ARG },
    required: ['entity'],
  },
  readOnly: true,
  async run(ctx, args) {
    const entity = await ctx.backend.resolveEntity(args.entity as string);
    const at = args.at as string | undefined;
    const first = pageStart('read_window', args, entity, 0, at ?? '');
    const w = at === undefined ? await ctx.backend.getWindow(entity.id) : await ctx.backend.getWindowAt(entity.id, at);
    const budget = at === undefined ? ` of ${entity.window.budget_tokens}` : ` when it answered #${(w as { seq?: number }).seq}`;
    const head = `${entity.name || entity.id}: window of ${w.tokens} tokens${budget}, ${w.blocks.length} blocks${first ? `, from block ${first + 1}` : ''}`;
    const lines = w.blocks.slice(first).map(blockLine);
    return entityPage({ tool: 'read_window', entity, head, lines, first, total: w.blocks.length, what: 'blocks', key: at ?? '' }, args);
  },
};

function blockLine(b: WindowBlock): string {
  return b.kind === 'summary' ? `[summary of #${b.covers[0]}-#${b.covers[1]}] ${b.content}` : `#${b.covers[0]} ${b.role}: ${b.content}`;
}

export const listRotations: Tool = {
  name: 'list_rotations',
  title: 'List rotations',
  description: "List an entity's rotations, oldest first: each time older messages were folded into a summary, which messages, and the summary written.",
  args: { properties: { entity: ENTITY_ARG, cursor: CURSOR_ARG, max_tokens: MAX_TOKENS_ARG }, required: ['entity'] },
  readOnly: true,
  async run(ctx, args) {
    const entity = await ctx.backend.resolveEntity(args.entity as string);
    const first = pageStart('list_rotations', args, entity, 0);
    const { rotations } = await ctx.backend.listRotations(entity.id);
    const lines = rotations.slice(first).map((r) => `${minute(r.created_at)} ${r.trigger}: folded #${r.from_seq}-#${r.to_seq} into ${r.summary.tokens} tokens${r.undone ? ' (undone)' : ''}: ${r.summary.text}`);
    const head = rotations.length ? `${entity.name || entity.id}: ${rotations.length} rotations${first ? `, from the ${first + 1}th` : ''}` : `${entity.name || entity.id} has not rotated yet`;
    return entityPage({ tool: 'list_rotations', entity, head, lines, first, total: rotations.length, what: 'rotations' }, args);
  },
};
