import type { UsageQuery, UsageReport } from '../core/wire/usage.js';
import type { ChatImportOptions, ChatImportProgressHandler, ChatImportResult } from '../core/wire/chat-import.js';
import type { Backend, ChatCompletion, ImportOptions, ImportedEntity, CompleteInput, CompleteOptions, EntityPage, LocalAdmin, NamePolicy, RespondOptions } from '../core/backend.js';
import { MgptError } from '../core/errors.js';
import type { MemoryBlock, MemoryHistory, MemoryList } from '../core/wire/memory.js';
import type { ExchangeInput, ExchangeResult, RecallInput, RecallResult } from '../core/wire/exchange.js';
import type {
  CreateEntityInput,
  CreatedEntity,
  DeletedEntity,
  Entity,
  EntityList,
  EntityWindow,
  ExportFormat,
  ListMessagesInput,
  SearchInput,
  SearchList,
  MessageList,
  SendInput,
  TurnEvent,
  UpdateEntityInput,
} from '../core/wire/entity-types.js';
import type { EntityWindowAt, EntityWindowPrompt, RotateInput, RotateResult, RotationList } from '../core/wire/rotation-types.js';
import type {
  CreateUniverseInput,
  CreatedUniverse,
  GenerationResponse,
  ImageResponse,
  LogDetail,
  LogList,
  LogQuery,
  ImageRequest,
  RespondInput,
} from '../core/wire/universe-types.js';
import type { Engine } from '../engine/engine.js';
import { EngineAdmin } from './local-admin.js';
import { completionMessages } from '../core/wire/openai.js';
import { parseChatOptions } from '../engine/openai/chat-options.js';

/** The embedded default: the engine in-process, state in one SQLite file. */
export class LocalBackend implements Backend {
  readonly kind = 'local' as const;
  readonly engine: Engine;
  /** What only the embedded engine offers (accounts, keys, prompts, universes read back, import). */
  readonly admin: LocalAdmin;

  private readonly accountId: string;
  private readonly names: NamePolicy;

  /** `uniqueNames`: an import numbers a taken name, or refuses a taken `--name` (the CLI's rule); a create refuses one always. */
  constructor(engine: Engine, opts: { accountId?: string; uniqueNames?: boolean } = {}) {
    this.engine = engine;
    this.accountId = opts.accountId ?? 'local';
    this.names = { uniqueName: opts.uniqueNames === true };
    this.admin = new EngineAdmin(this.engine, this.accountId, this.names);
  }

  async createEntity(input: CreateEntityInput): Promise<CreatedEntity> {
    return this.engine.entities.create(input, this.accountId);
  }
  async listEntities(page?: EntityPage): Promise<EntityList> {
    return this.engine.entities.list(this.accountId, page);
  }
  async resolveEntity(ref: string): Promise<Entity> {
    return this.engine.entities.resolve(ref, this.accountId);
  }
  search(input: SearchInput): Promise<SearchList> {
    return this.engine.search(input, this.accountId);
  }
  async getEntity(id: string): Promise<Entity> {
    return this.engine.entities.get(id, this.accountId);
  }
  updateEntity(id: string, input: UpdateEntityInput): Promise<Entity> {
    return this.engine.entities.update(id, input, this.accountId);
  }
  async deleteEntity(id: string): Promise<DeletedEntity> {
    return this.engine.entities.delete(id, this.accountId);
  }
  sendMessage(id: string, input: SendInput): AsyncIterable<TurnEvent> {
    // Validation errors surface when iteration starts, as they would over HTTP.
    const engine = this.engine;
    const accountId = this.accountId;
    return (async function* () {
      yield* engine.entities.send(id, input, accountId);
    })();
  }
  async listMessages(id: string, input?: ListMessagesInput): Promise<MessageList> {
    return this.engine.entities.messages(id, input ?? {}, this.accountId);
  }
  listMemory(id: string): Promise<MemoryList> {
    return this.engine.memory.list(id, this.accountId);
  }
  memoryHistory(id: string): Promise<MemoryHistory> {
    return this.engine.memory.history(id, this.accountId);
  }
  getMemory(id: string, label: string): Promise<MemoryBlock> {
    return this.engine.memory.get(id, label, this.accountId);
  }
  setMemory(id: string, label: string, text: string): Promise<MemoryBlock> {
    return this.engine.memory.set(id, label, text, this.accountId);
  }
  deleteMemory(id: string, label: string): Promise<void> {
    return this.engine.memory.remove(id, label, this.accountId);
  }
  recall(id: string, input: RecallInput): Promise<RecallResult> {
    return this.engine.entities.recall(id, input, this.accountId);
  }
  appendExchange(id: string, input: ExchangeInput): Promise<ExchangeResult> {
    return this.engine.entities.appendExchange(id, input, this.accountId);
  }
  async getWindow(id: string): Promise<EntityWindow> {
    return this.engine.entities.window(id, this.accountId);
  }
  async getWindowPrompt(id: string): Promise<EntityWindowPrompt> {
    return this.engine.entities.windowPrompt(id, this.accountId);
  }
  async getWindowAt(id: string, at: string): Promise<EntityWindowAt> {
    return this.engine.entities.windowAt(id, at, this.accountId);
  }
  async listRotations(id: string): Promise<RotationList> {
    return this.engine.entities.rotations(id, this.accountId);
  }
  async rotate(id: string, input: RotateInput, opts: { signal?: AbortSignal } = {}): Promise<RotateResult> {
    return this.engine.entities.rotate(id, input, this.accountId, opts.signal);
  }
  exportEntity(id: string, format: ExportFormat): AsyncIterable<Uint8Array> {
    const engine = this.engine;
    const accountId = this.accountId;
    return (async function* () {
      yield* await engine.entities.export(id, format, accountId);
    })();
  }
  importChats(file: string, opts: ChatImportOptions, onProgress?: ChatImportProgressHandler, signal?: AbortSignal): Promise<ChatImportResult> {
    return this.engine.importChats(file, opts, this.accountId, onProgress, signal);
  }
  createUniverse(input: CreateUniverseInput): Promise<CreatedUniverse> {
    return this.engine.universes.create(input);
  }
  async resolveUniverse(ref: string): Promise<string> {
    return this.engine.universes.resolve(ref);
  }
  async complete(input: CompleteInput, opts: CompleteOptions = {}): Promise<ChatCompletion> {
    const { userId } = await this.engine.accounts.find(this.accountId);
    // Sampling is checked by the engine, as the facade checks a request's fields: both backends refuse the same input.
    const options = parseChatOptions({ ...input.sampling, stream: true });
    const chat = { model: input.model, messages: completionMessages(input), options };
    const reply = await this.engine.openai.answer(chat, { branch: false, accountId: this.accountId, userId, signal: opts.signal });
    for await (const ev of reply.events) {
      if (ev.type === 'delta') opts.onDelta?.(ev.text);
      else if (ev.type === 'done') return ev.completion;
    }
    throw new MgptError('the completion ended without a reply');
  }
  respond(input: RespondInput, opts?: RespondOptions): Promise<GenerationResponse> {
    return this.engine.respond(input, opts);
  }
  generateImage(input: ImageRequest, opts?: { signal?: AbortSignal }): Promise<ImageResponse> {
    return this.engine.generateImage(input, opts);
  }
  async importArchive(bytes: Uint8Array, format: ExportFormat, opts: ImportOptions = {}): Promise<ImportedEntity> {
    return this.engine.entities.import(bytes, format, { ...this.names, ...opts }, this.accountId);
  }
  async usage(query: UsageQuery): Promise<UsageReport> {
    return this.engine.usage.report(query, this.accountId);
  }
  async listLogs(query: LogQuery): Promise<LogList> {
    return this.engine.logs.list(query);
  }
  async getLog(id: string): Promise<LogDetail> {
    return this.engine.logs.get(await this.engine.logs.resolve(id));
  }
  async close(): Promise<void> {
    await this.engine.close();
  }
}
