import { MgptError } from '../core/errors.js';
import type { EntityCompletion } from '../core/wire/entity-types.js';
import { ENTITY_ARG } from './args.js';
import { MAX_TOKENS_ARG, fitLines, maxTokensOf } from './budget.js';
import type { Tool } from './tool.js';

/** The longest message a tool takes: well past any window budget, far below what would hold the server. */
export const CONTENT_MAX_CHARS = 1_000_000;

export const append: Tool = {
  name: 'append',
  title: 'Record an exchange',
  description:
    "Record something in an entity's transcript without calling its model: `content` is the user's side (what was said, or a note to remember) and `reply` the assistant's side " +
    '(what was answered, or a short acknowledgement). Both join the transcript and the window as a turn would store them; later recall, search and turns find them. Nothing is billed.',
  args: {
    properties: {
      entity: ENTITY_ARG,
      content: { type: 'string', description: "the user's side: a message, or a note to remember", maxLength: CONTENT_MAX_CHARS },
      reply: { type: 'string', description: "the assistant's side: its answer, or an acknowledgement such as \"Noted.\"", maxLength: CONTENT_MAX_CHARS },
    },
    required: ['entity', 'content', 'reply'],
  },
  readOnly: false,
  async run(ctx, args) {
    const entity = await ctx.backend.resolveEntity(args.entity as string);
    const stored = await ctx.backend.appendExchange(entity.id, { content: args.content as string, reply: args.reply as string });
    ctx.changed({ entityId: entity.id, window: true });
    const seqs = stored.data.map((m) => `#${m.seq}`).join(' and ');
    return { text: `recorded in ${entity.name || entity.id} as messages ${seqs}`, structured: { entity_id: entity.id, messages: stored.data.map((m) => ({ seq: m.seq, role: m.role, tokens: m.tokens })) } };
  },
};

/** Offered only when the server was started with --allow-send: a turn calls the entity's model and is billed. */
export const send: Tool = {
  name: 'send',
  title: 'Talk to the entity',
  description:
    "Send a message to an entity and get its reply from its own model, with its memory (window, pinned memory, recall): a turn, stored and billed as any turn. " +
    'The reply is cut at max_tokens here (read_transcript has it whole).',
  args: { properties: { entity: ENTITY_ARG, content: { type: 'string', description: 'the message', maxLength: CONTENT_MAX_CHARS }, max_tokens: MAX_TOKENS_ARG }, required: ['entity', 'content'] },
  readOnly: false,
  async run(ctx, args) {
    const entity = await ctx.backend.resolveEntity(args.entity as string);
    const completion = await finalReply(ctx.backend.sendMessage(entity.id, { content: args.content as string, signal: ctx.signal, buffered: true }));
    ctx.changed({ entityId: entity.id, window: true });
    const reply = completion.choices[0]?.message.content ?? '';
    const fitted = await fitLines('', [reply], maxTokensOf(args), () => '');
    return { text: fitted.text, structured: { entity_id: entity.id, id: completion.id, usage: completion.usage, cut: fitted.cut } };
  },
};

async function finalReply(events: AsyncIterable<{ type: string; completion?: EntityCompletion }>): Promise<EntityCompletion> {
  for await (const ev of events) if (ev.type === 'done' && ev.completion) return ev.completion;
  throw new MgptError('the turn ended without a reply');
}
