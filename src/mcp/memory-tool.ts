import { BadRequestError, NotFoundError } from '../core/errors.js';
import type { Backend } from '../core/backend.js';
import { MAX_TOKENS_ARG, fitLines, maxTokensOf } from './budget.js';
import { MEMORIES, type MemoryPath, blockOf, dirOf, parsePath } from './memory-paths.js';
import { type Tool, type ToolContext, type ToolResult } from './tool.js';

const TEXT_MAX = 100_000;
const PATH_ARG = { type: 'string', description: 'a path: /memories, /memories/ENTITY or /memories/ENTITY/LABEL', maxLength: 400 } as const;
const COMMANDS = ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] as const;

/**
 * Pinned memory in the shape of Anthropic's memory tool: the same commands and arguments over
 * `/memories/<entity>/<label>`, each file one block of the entity's pinned memory (shown to its
 * model after the instructions on every turn), under the same limits and history as `mgpt memory`.
 */
export const memory: Tool = {
  name: 'memory',
  title: 'Pinned memory',
  description:
    "An entity's pinned memory as files, like Anthropic's memory tool: /memories has a directory per entity, /memories/ENTITY/LABEL is one block its model sees on every turn. " +
    'Commands: view (path, view_range?), create (path, file_text), str_replace (path, old_str, new_str), insert (path, insert_line, insert_text), delete (path), rename (old_path, new_path). ' +
    'Blocks have limits (count and tokens); a refused write changes nothing.',
  args: {
    properties: {
      command: { type: 'string', description: COMMANDS.join(', '), maxLength: 20, enum: COMMANDS },
      path: PATH_ARG,
      view_range: { type: 'array', description: 'view: [first line, last line], 1-based; -1 as the last means to the end', items: { type: 'integer' }, minItems: 2, maxItems: 2 },
      file_text: { type: 'string', description: "create: the block's text", maxLength: TEXT_MAX },
      old_str: { type: 'string', description: 'str_replace: text that appears exactly once in the block', maxLength: TEXT_MAX },
      new_str: { type: 'string', description: 'str_replace: what replaces it', maxLength: TEXT_MAX },
      insert_line: { type: 'integer', description: 'insert: the line after which to insert (0: at the start)', minimum: 0, maximum: 100_000 },
      insert_text: { type: 'string', description: 'insert: the text to insert', maxLength: TEXT_MAX },
      old_path: PATH_ARG,
      new_path: PATH_ARG,
      max_tokens: MAX_TOKENS_ARG,
    },
    required: ['command'],
  },
  readOnly: false,
  destructive: true,
  run: runMemory,
};

function runMemory(ctx: ToolContext, a: Record<string, unknown>): Promise<ToolResult> {
  const need = (name: string): never => {
    throw new BadRequestError(`memory ${a.command as string}: ${name} is required`);
  };
  const arg = (name: string): string => (a[name] === undefined ? need(name) : (a[name] as string));
  switch (a.command) {
    case 'view':
      return view(ctx.backend, parsePath('path', arg('path')), a);
    case 'create':
      return write(ctx, arg('path'), () => Promise.resolve(arg('file_text')), 'created');
    case 'str_replace':
      return write(ctx, arg('path'), (text) => replaced(text, arg('old_str'), (a.new_str as string | undefined) ?? '', arg('path')), 'edited', true);
    case 'insert':
      return write(ctx, arg('path'), (text) => inserted(text, a.insert_line === undefined ? need('insert_line') : (a.insert_line as number), arg('insert_text')), 'edited', true);
    case 'delete':
      return remove(ctx, parsePath('path', arg('path')));
    default:
      return rename(ctx, arg('old_path'), arg('new_path'));
  }
}

/** A directory's listing, or a block's lines numbered as Anthropic's view numbers them. */
async function view(backend: Backend, p: MemoryPath, a: Record<string, unknown>): Promise<ToolResult> {
  const max = maxTokensOf(a);
  if (p.kind === 'root') {
    const { data } = await backend.listEntities();
    const lines = data.map((e) => `${dirOf(e, data)}/  (${e.name || 'no name'}, ${e.id})`);
    return { text: (await fitLines(`/memories: a directory per entity (${data.length})`, lines, max, () => '')).text };
  }
  const entity = await backend.resolveEntity(p.entity);
  // The directory as the client named it: a name another entity shares would not resolve again.
  const dir = `${MEMORIES}/${p.entity}`;
  if (p.kind === 'entity') {
    const list = await backend.listMemory(entity.id);
    const lines = list.memory.map((b) => `${dir}/${b.label}  (${b.tokens} tokens, ${b.text.split('\n').length} lines)`);
    const head = `${dir}: ${list.memory.length} of ${list.limits.blocks} blocks, ${list.tokens} of ${list.limits.tokens} tokens`;
    return { text: (await fitLines(head, lines, max, () => '')).text };
  }
  const block = await backend.getMemory(entity.id, p.label);
  const all = block.text.split('\n');
  const [first, last] = range(a.view_range as number[] | undefined, all.length);
  const lines = all.slice(first - 1, last).map((l, i) => `${String(first + i).padStart(6)}\t${l}`);
  const more = (taken: number) => (first - 1 + taken < last ? `[more lines: view with view_range [${first + taken}, -1]]` : '');
  return { text: (await fitLines(`${dir}/${p.label}, lines ${first}-${last} of ${all.length}:`, lines, max, more)).text };
}

function range(r: number[] | undefined, lines: number): [number, number] {
  if (!r) return [1, lines];
  const [first, last] = [r[0]!, r[1] === -1 ? lines : r[1]!];
  if (first < 1 || first > lines || last < first || last > lines) throw new BadRequestError(`memory view: view_range ${JSON.stringify(r)} is outside the block's lines 1-${lines}`);
  return [first, last];
}

/** Sets a block to what `next` makes of its text ('' when it has none; `existing`: it must have one). */
async function write(ctx: ToolContext, path: string, next: (text: string) => Promise<string> | string, done: string, existing = false): Promise<ToolResult> {
  const { entity: ref, label } = blockOf('path', path);
  const entity = await ctx.backend.resolveEntity(ref);
  const before = existing ? (await ctx.backend.getMemory(entity.id, label)).text : '';
  const block = await ctx.backend.setMemory(entity.id, label, await next(before));
  ctx.changed({ entityId: entity.id, label });
  return { text: `${path}: ${done} (${block.tokens} tokens)`, structured: { entity_id: entity.id, label, tokens: block.tokens } };
}

function replaced(text: string, oldStr: string, newStr: string, path: string): string {
  if (oldStr === '') throw new BadRequestError('memory str_replace: old_str is empty');
  const n = text.split(oldStr).length - 1;
  if (n === 0) throw new BadRequestError(`memory str_replace: old_str does not appear verbatim in ${path}; nothing changed`, { hint: `view ${path} to see its text` });
  if (n > 1) throw new BadRequestError(`memory str_replace: old_str appears ${n} times in ${path}; nothing changed`, { hint: 'include more of the text around it so it appears once' });
  return text.replace(oldStr, () => newStr);
}

function inserted(text: string, at: number, insert: string): string {
  const lines = text.split('\n');
  if (at > lines.length) throw new BadRequestError(`memory insert: insert_line ${at} is past the block's ${lines.length} lines; nothing changed`);
  return [...lines.slice(0, at), ...insert.split('\n'), ...lines.slice(at)].join('\n');
}

/** Removes a block, or every block of an entity's directory (the entity itself stays). */
async function remove(ctx: ToolContext, p: MemoryPath): Promise<ToolResult> {
  if (p.kind === 'root') throw new BadRequestError('memory delete: /memories itself cannot be deleted', { hint: 'delete /memories/ENTITY/LABEL, or /memories/ENTITY for all its blocks' });
  const entity = await ctx.backend.resolveEntity(p.entity);
  const labels = p.kind === 'block' ? [p.label] : (await ctx.backend.listMemory(entity.id)).memory.map((b) => b.label);
  for (const label of labels) await ctx.backend.deleteMemory(entity.id, label);
  ctx.changed({ entityId: entity.id, label: p.kind === 'block' ? p.label : '' });
  return { text: `deleted ${labels.length} block${labels.length === 1 ? '' : 's'}: ${labels.join(', ') || '(none)'}`, structured: { entity_id: entity.id, deleted: labels } };
}

/**
 * Moves a block to a new label (or entity). The backend has no rename, so the old block goes first
 * (the new one would count twice against the limits), and comes back if the new one is refused.
 */
async function rename(ctx: ToolContext, oldPath: string, newPath: string): Promise<ToolResult> {
  const from = blockOf('old_path', oldPath);
  const to = blockOf('new_path', newPath);
  const [src, dst] = [await ctx.backend.resolveEntity(from.entity), await ctx.backend.resolveEntity(to.entity)];
  const block = await ctx.backend.getMemory(src.id, from.label);
  const taken = await ctx.backend.getMemory(dst.id, to.label).then(() => true, (err: unknown) => (err instanceof NotFoundError ? false : Promise.reject(err)));
  if (taken) throw new BadRequestError(`memory rename: ${newPath} exists; nothing changed`, { hint: `delete it first, or pick another label` });
  await ctx.backend.deleteMemory(src.id, from.label);
  try {
    await ctx.backend.setMemory(dst.id, to.label, block.text);
  } catch (err) {
    await ctx.backend.setMemory(src.id, from.label, block.text);
    throw err;
  }
  ctx.changed({ entityId: src.id, label: from.label });
  ctx.changed({ entityId: dst.id, label: to.label });
  return { text: `renamed ${oldPath} to ${newPath}`, structured: { from: { entity_id: src.id, label: from.label }, to: { entity_id: dst.id, label: to.label } } };
}
