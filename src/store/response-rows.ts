/**
 * A response of the OpenAI Responses facade: which entity turn it is (or the tool round it
 * opened), and what its routes return. The transcript is the entity's; this only names a place in it.
 */
export interface ResponseRow {
  id: string;
  accountId: string;
  entityId: string;
  /** The entity the client's chain of responses started on (a branch's original): its `entity:` model still names the chain. */
  rootEntityId: string;
  /** The transcript length the response continued from (its user message, if stored, is after it). */
  afterSeq: number;
  /** The stored reply's seq; null while the response waits for the client's function_call_output. */
  replySeq: number | null;
  idempotencyKey: string | null;
  /** The response object, as JSON. */
  body: string;
  /** Its input items (GET .../input_items), as JSON. */
  input: string;
  /** The open tool round (the user message and the calls), as JSON, when replySeq is null. */
  pending: string | null;
  createdAt: string;
}

/** An entity addressed as an OpenAI conversation: its metadata, and whether the conversation was deleted. */
export interface ConversationRow {
  entityId: string;
  accountId: string;
  /** JSON object of up to 16 string pairs. */
  metadata: string;
  /** JSON array of the messages added that make no whole turn yet (a user message awaiting its reply). */
  held: string;
  deletedAt: string | null;
  createdAt: string;
}

export interface ResponseStore {
  insert(row: ResponseRow): Promise<void>;
  get(accountId: string, id: string): Promise<ResponseRow | undefined>;
  /** The response a turn with this idempotency key made on the entity (a retry's replay). */
  byKey(entityId: string, key: string): Promise<ResponseRow | undefined>;
  /** The entity's newest response (an open tool round a conversation's next response answers). */
  latest(entityId: string): Promise<ResponseRow | undefined>;
  /** Forgets the response object; the entity's transcript is not touched. */
  delete(accountId: string, id: string): Promise<boolean>;
  conversation(accountId: string, entityId: string): Promise<ConversationRow | undefined>;
  /** Creates or replaces the conversation's row (its metadata, its deletion). */
  putConversation(row: ConversationRow): Promise<void>;
}
