import { BadRequestError, ConflictError } from '../../../core/errors.js';
import { ENTITY_MODEL, type Entity } from '../../../core/wire/entity-types.js';
import type { Conversation, DeletedConversation, ItemList, MessageItem } from '../../../core/wire/responses-types.js';
import type { ConversationRow } from '../../../store/types.js';
import type { EngineDeps } from '../../deps.js';
import type { EntityService } from '../../entities/entities.js';
import { type HeldMessage, appendTurns, wholeTurns } from './conversation-append.js';
import { type ListQuery, listOf } from './item-pages.js';
import { inputItem, parseMetadata } from './response-request.js';
import { conversationEntity, conversationIdOf } from './response-target.js';

type Deps = Pick<EngineDeps, 'store' | 'clock' | 'limits' | 'newId' | 'namedModels'>;
type Entities = Pick<EntityService, 'create' | 'get' | 'messages' | 'resolve'>;

/**
 * OpenAI's Conversations API over entities (docs/openai-clients.md#the-conversations-api): a
 * conversation is an entity (`conv_` + its UUID's hex, one to one), its items are the entity's
 * messages. Items added without a model call are appended as whole turns; a user message waiting
 * for its reply is held (and listed) until it comes. The transcript is append-only, so an item
 * cannot be deleted; deleting a conversation retires its id and keeps the entity.
 */
export class ConversationsService {
  constructor(
    private readonly entities: Entities,
    private readonly deps: Deps,
  ) {}

  async create(b: Record<string, unknown>, accountId: string): Promise<Conversation> {
    const extra = Object.keys(b).find((k) => k !== 'items' && k !== 'metadata');
    if (extra) throw new BadRequestError(`unknown field ${JSON.stringify(extra)} in a conversation request (items, metadata)`);
    const metadata = parseMetadata(b.metadata);
    const items = b.items === undefined || b.items === null ? [] : messagesOf(b.items);
    const { turns, held } = wholeTurns(items);
    const entity = await this.entities.create({ model: ENTITY_MODEL }, accountId);
    const id = conversationIdOf(entity.id);
    const row: ConversationRow = { entityId: entity.id, accountId, metadata: JSON.stringify(metadata), held: JSON.stringify(held), deletedAt: null, createdAt: this.deps.clock.iso() };
    await this.deps.store.responses.putConversation(row);
    await appendTurns(this.deps, accountId, entity.id, turns, { id, items: items.length });
    return { id, object: 'conversation', created_at: Math.floor(Date.parse(entity.created_at) / 1000), metadata };
  }

  async retrieve(conv: string, accountId: string): Promise<Conversation> {
    const { entity, row } = await this.open(conv, accountId);
    return this.wire(entity, row);
  }

  /** Replaces the metadata (OpenAI's update takes only metadata). */
  async update(conv: string, b: Record<string, unknown>, accountId: string): Promise<Conversation> {
    const extra = Object.keys(b).find((k) => k !== 'metadata');
    if (extra) throw new BadRequestError(`unknown field ${JSON.stringify(extra)}: a conversation's update takes metadata only`);
    if (b.metadata === undefined) throw new BadRequestError('metadata is required');
    const metadata = parseMetadata(b.metadata);
    const { entity, row } = await this.open(conv, accountId);
    const next = { ...row, metadata: JSON.stringify(metadata) };
    await this.deps.store.responses.putConversation(next);
    return this.wire(entity, next);
  }

  /** Retires the conversation id; the entity, its transcript and its responses stay (as OpenAI keeps a deleted conversation's items). */
  async delete(conv: string, accountId: string): Promise<DeletedConversation> {
    const { row } = await this.open(conv, accountId);
    await this.deps.store.responses.putConversation({ ...row, deletedAt: this.deps.clock.iso() });
    return { id: conv, object: 'conversation.deleted', deleted: true };
  }

  async listItems(conv: string, q: ListQuery, accountId: string): Promise<ItemList<MessageItem>> {
    const { entity, row } = await this.open(conv, accountId);
    const held = JSON.parse(row.held) as HeldMessage[];
    const total = entity.transcript.messages + held.length;
    const after = q.after === undefined ? undefined : this.indexOf(entity, q.after, total);
    const [from, to] = q.order === 'asc' ? [after ?? 0, Math.min(total, (after ?? 0) + q.limit)] : [Math.max(0, (after === undefined ? total + 1 : after) - 1 - q.limit), (after === undefined ? total + 1 : after) - 1];
    const items = await this.itemsAt(entity, held, from, to, accountId);
    const data = q.order === 'asc' ? items : items.reverse();
    return listOf(data, q.order === 'asc' ? to < total : from > 0);
  }

  async retrieveItem(conv: string, itemId: string, accountId: string): Promise<MessageItem> {
    const { entity, row } = await this.open(conv, accountId);
    const held = JSON.parse(row.held) as HeldMessage[];
    const n = this.indexOf(entity, itemId, entity.transcript.messages + held.length);
    return (await this.itemsAt(entity, held, n - 1, n, accountId))[0];
  }

  /** Adds items without a model call: whole turns join the transcript, a trailing user message is held for its reply. */
  async addItems(conv: string, b: Record<string, unknown>, accountId: string): Promise<ItemList<MessageItem>> {
    const extra = Object.keys(b).find((k) => k !== 'items');
    if (extra) throw new BadRequestError(`unknown field ${JSON.stringify(extra)} (items)`);
    const added = messagesOf(b.items);
    const { entity, row } = await this.open(conv, accountId);
    const before = entity.transcript.messages + (JSON.parse(row.held) as HeldMessage[]).length;
    const { turns, held } = wholeTurns([...(JSON.parse(row.held) as HeldMessage[]), ...added]);
    await appendTurns(this.deps, accountId, entity.id, turns, { id: conv, items: added.length });
    await this.deps.store.responses.putConversation({ ...row, held: JSON.stringify(held) });
    const now = await this.open(conv, accountId);
    const total = now.entity.transcript.messages + held.length;
    // A message merged into a held one shows as that message.
    return listOf(await this.itemsAt(now.entity, held, Math.max(0, Math.min(before, total - 1)), total, accountId), false);
  }

  /** The transcript is append-only: an item stays (docs/openai-clients.md#what-deleting-means). */
  async deleteItem(conv: string, itemId: string, accountId: string): Promise<never> {
    await this.retrieveItem(conv, itemId, accountId);
    throw new ConflictError(`item ${itemId} cannot be deleted: an entity's transcript is append-only`, {
      hint: 'to go on without it, branch: send previous_response_id naming an earlier response',
    });
  }

  /** The conversation's entity and its row (a conversation made as an entity has none yet: an empty one). */
  async open(conv: string, accountId: string): Promise<{ entity: Entity; row: ConversationRow }> {
    const entity = await conversationEntity({ entities: this.entities }, this.deps, conv, accountId);
    const row = (await this.deps.store.responses.conversation(accountId, entity.id))
      ?? { entityId: entity.id, accountId, metadata: '{}', held: '[]', deletedAt: null, createdAt: entity.created_at };
    return { entity, row };
  }

  /** Items `from`+1..`to` (1-based): transcript messages, then held ones. */
  private async itemsAt(entity: Entity, held: HeldMessage[], from: number, to: number, accountId: string): Promise<MessageItem[]> {
    const length = entity.transcript.messages;
    const out: MessageItem[] = [];
    for (let after = from; after < Math.min(to, length);) {
      const page = await this.entities.messages(entity.id, { after, limit: Math.min(500, Math.min(to, length) - after) }, accountId);
      out.push(...page.data.map((m) => itemOf(entity.id, m.seq, m.role, m.content)));
      after += page.data.length;
      if (page.data.length === 0) break;
    }
    for (let i = Math.max(from, length); i < to; i++) out.push(itemOf(entity.id, i + 1, held[i - length].role, held[i - length].text, 'held'));
    return out;
  }

  /** The 1-based place an item id names in this conversation. */
  private indexOf(entity: Entity, itemId: string, total: number): number {
    const m = /^msg_([0-9a-f]{32})_(\d+)$/.exec(itemId);
    const n = m ? Number(m[2]) : NaN;
    if (!m || m[1] !== entity.id.replace(/-/g, '') || n < 1 || n > total) throw new BadRequestError(`${itemId} is not an item of conversation ${conversationIdOf(entity.id)}`);
    return n;
  }

  private wire(entity: Entity, row: ConversationRow): Conversation {
    return { id: conversationIdOf(entity.id), object: 'conversation', created_at: Math.floor(Date.parse(entity.created_at) / 1000), metadata: JSON.parse(row.metadata) };
  }
}

/** A message item: its id names the entity and the message's place (seq), so it is the same on every read. */
function itemOf(entityId: string, seq: number, role: 'user' | 'assistant', text: string, status: 'completed' | 'held' = 'completed'): MessageItem {
  const content = role === 'user' ? [{ type: 'input_text' as const, text }] : [{ type: 'output_text' as const, text, annotations: [] as never[] }];
  return { id: `msg_${entityId.replace(/-/g, '')}_${seq}`, type: 'message', role, status: status === 'held' ? 'in_progress' : 'completed', content };
}

/**
 * Items as a conversation stores them: user and assistant messages. Function calls and their
 * outputs are a turn's tool round, which a transcript never holds, and system messages are the
 * entity's instructions' place: both are accepted and left out. At most 20 a request.
 */
function messagesOf(v: unknown): HeldMessage[] {
  if (!Array.isArray(v)) throw new BadRequestError('items must be an array');
  if (v.length > 20) throw new BadRequestError(`items has ${v.length} entries; at most 20 a request`);
  return v.flatMap((raw, i) => inputItem(raw, `items[${i}]`)).flatMap((it) =>
    it.type === 'message' && it.role !== 'system' ? [{ role: it.role, text: it.text }] : [],
  );
}
