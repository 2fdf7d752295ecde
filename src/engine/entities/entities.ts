import { parseSampling } from '../../core/wire/sampling.js';
import {
  type CreateEntityInput,
  type CreatedEntity,
  type DeletedEntity,
  ENTITY_MODEL,
  type Entity,
  type EntityList,
  type EntityWindow,
  type ExportFormat,
  LIST_ENTITIES_MAX,
  LIST_MESSAGES_DEFAULT,
  LIST_MESSAGES_MAX,
  type ListMessagesInput,
  type MessageList,
  type SendInput,
  type TurnEvent,
  type UpdateEntityInput,
} from '../../core/wire/entity-types.js';
import type { EntityPage, ImportOptions, ImportedEntity } from '../../core/backend.js';
import { MIN_ID_PREFIX, pickByRef } from '../../core/ref.js';
import { UUID } from '../../core/ids.js';
import { sha256 } from '../../core/hash.js';
import { BadRequestError, NotFoundError } from '../../core/errors.js';
import { loadTokenEstimator } from '../../core/text/tokens.js';
import type { BlockRow, EntityImport, EntityRow } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';
import { checkBudget, checkCap, checkCapField, checkCreateFields, checkInstructions, checkMemoryTool, checkName, checkRecall, checkRecallTokens, checkUpdate, recallCode } from './entity-rules.js';
import { DEFAULT_RECALL_MODE } from '../../core/text/recall-query.js';
import { toBlock, toEntity, toMessage } from './entity-wire.js';
import { checkKey } from '../generation/idempotency.js';
import { exportEntity } from './export.js';
import { importEntity } from './import.js';
import { refuseTakenName } from './entity-names.js';
import { type EntityRef, type TurnExtras, runTurn } from './turn.js';
import { windowMessages } from './window/window-state.js';
import { loadWindow } from './window/load-window.js';
import { pinnedMemory } from './memory.js';
import type { ChatMessage } from '../../providers/spec.js';
import type { RouteFit } from '../generation/calibration.js';
import type { EntityWindowAt, EntityWindowPrompt, RotateResult, RotationList } from '../../core/wire/rotation-types.js';
import { nextPrompt } from './window/next-prompt.js';
import { windowAt } from './window/at-turn.js';
import { listRotations } from './rotations.js';
import { checkRotateInput, steerRotation } from './steer.js';
import { appendExchange, recallFor } from './exchange.js';
import { writtenAtOf } from './written-at.js';
import type { ExchangeResult, RecallInput, RecallResult } from '../../core/wire/exchange.js';

export const DEFAULT_ACCOUNT = 'local';

/** The entity service of seed 001 over the store: every rule of docs/design.md#entities. */
export class EntityService {
  constructor(private readonly deps: EngineDeps) {}

  /** A name another entity of the account has is refused, from every client alike: a name then names one entity. */
  async create(input: CreateEntityInput, accountId: string): Promise<CreatedEntity> {
    checkCreateFields(input);
    const model = input?.model;
    if (model === undefined || model === null || model === '') {
      throw new BadRequestError(`model is required; entities use ${ENTITY_MODEL}`);
    }
    if (model !== ENTITY_MODEL) {
      throw new BadRequestError(`unsupported model ${JSON.stringify(model)}: entities use ${ENTITY_MODEL}`);
    }
    // Absent means empty; null or any other type is a malformed request.
    const name = checkName(input.name === undefined ? '' : input.name);
    const instructions = checkInstructions(input.instructions === undefined ? '' : input.instructions);
    const { recall, recallTokens, budgetTokens, capTokens, memoryTool } = this.settingsOf(input);
    if (recall === 'tool') await this.checkCanRecall(model);
    await refuseTakenName(this.deps.store, accountId, name);
    const tok = await loadTokenEstimator();
    const now = this.deps.clock.iso();
    const row: EntityRow = {
      id: this.deps.newId(),
      accountId,
      name,
      instructions,
      instructionsTokens: tok.count(instructions),
      model,
      state: 'none',
      budgetTokens,
      capTokens,
      transcriptMessages: 0,
      transcriptTokens: 0,
      windowTokens: 0,
      windowBlocks: 0,
      recall: recallCode(recall),
      recallTokens,
      memoryTool: memoryTool ? 1 : 0,
      createdAt: now,
      updatedAt: now,
    };
    await this.deps.store.entities.insert(row);
    return { ...toEntity(row, true, this.deps.limits.recallTokens), entity_id: row.id };
  }

  /** A new entity's settings, each as update checks it, the engine's defaults for those not given. */
  private settingsOf(input: CreateEntityInput) {
    const budgetTokens = input.budget_tokens === undefined ? this.deps.limits.windowBudget : checkBudget(input.budget_tokens);
    const capTokens = input.cap_tokens === undefined ? this.deps.limits.transcriptCap : checkCap(checkCapField(input.cap_tokens), 0, this.deps.limits.maxTranscriptCap);
    return {
      budgetTokens,
      capTokens,
      recall: input.recall === undefined ? DEFAULT_RECALL_MODE : checkRecall(input.recall),
      recallTokens: input.recall_tokens === undefined ? null : checkRecallTokens(input.recall_tokens, budgetTokens),
      memoryTool: input.memory_tool === undefined ? false : checkMemoryTool(input.memory_tool),
    };
  }

  /** Most recently active first: the wire's 200 by default; locally any page (`limit`, `offset`). */
  async list(accountId: string, page: EntityPage = {}): Promise<EntityList> {
    const rows = await this.deps.store.entities.list(accountId, page.limit ?? LIST_ENTITIES_MAX, page.offset ?? 0);
    return { object: 'list', data: rows.map((r) => toEntity(r, false, this.deps.limits.recallTokens)) };
  }

  /** An ENTITY argument: an id, a unique id prefix (4+ characters) or a name, over all the account's entities. */
  async resolve(ref: string, accountId: string): Promise<Entity> {
    if (UUID.test(ref)) return this.get(ref, accountId);
    const prefix = ref.length >= MIN_ID_PREFIX ? ref.toLowerCase() : null;
    const rows = await this.deps.store.entities.matching(accountId, ref, prefix, 11);
    const hit = pickByRef('entity', ref, rows, 'list entities with: mgpt entities list');
    return this.retrieved(hit);
  }

  async get(id: string, accountId: string): Promise<Entity> {
    return this.retrieved(await this.row(id, accountId));
  }

  /** The entity as a retrieve shows it: with its window's counts, and the model's limit when that binds. */
  private async retrieved(row: EntityRow): Promise<Entity> {
    const entity = toEntity(row, true, this.deps.limits.recallTokens);
    const limit = await this.modelLimit(row);
    if (limit !== undefined) entity.window.model_limit_tokens = limit;
    return entity;
  }

  /**
   * PATCH (docs/design.md#extensions-beyond-the-wire-contracts): name, instructions, budget, transcript cap and recall; the model never changes. Allowed while
   * a turn holds the lease: that turn already read the head and its commit writes only counters,
   * so it finishes on the old values; the next turn reads the new ones, and a smaller budget is
   * met by that turn's rotation. The window is untouched, so its cached blocks stay valid.
   */
  async update(id: string, input: UpdateEntityInput, accountId: string): Promise<Entity> {
    const update = checkUpdate(input);
    const current = await this.row(id, accountId);
    const recall = update.recall === undefined ? undefined : checkRecall(update.recall);
    if (recall === 'tool') await this.checkCanRecall(current.model);
    const capTokens = update.cap_tokens === undefined ? undefined : checkCap(update.cap_tokens, current.transcriptTokens, this.deps.limits.maxTranscriptCap);
    const budget = update.budget_tokens ?? current.budgetTokens;
    const recallTokens = update.recall_tokens === undefined ? undefined : checkRecallTokens(update.recall_tokens, budget);
    const instructionsTokens =
      update.instructions === undefined ? undefined : (await loadTokenEstimator()).count(update.instructions);
    const row = await this.deps.store.entities.updateHead(accountId, id, {
      name: update.name,
      instructions: update.instructions,
      instructionsTokens,
      budgetTokens: update.budget_tokens,
      capTokens,
      recall: recall === undefined ? undefined : recallCode(recall),
      recallTokens,
      memoryTool: update.memory_tool === undefined ? undefined : update.memory_tool ? 1 : 0,
      updatedAt: this.deps.clock.iso(),
    });
    // Deleted while the tokenizer loaded.
    if (!row) throw notFound(id);
    return this.retrieved(row);
  }

  async delete(id: string, accountId: string): Promise<DeletedEntity> {
    if (!(await this.deps.store.entities.delete(accountId, id))) throw notFound(id);
    this.deps.windows.delete(id);
    // Deleted pages are zeroed (secure_delete); also empty the WAL, which still holds old page images.
    await this.deps.store.checkpoint();
    return { id, object: 'entity', deleted: true };
  }

  async messages(id: string, input: ListMessagesInput, accountId: string): Promise<MessageList> {
    const after = input.after ?? 0;
    const limit = input.limit ?? LIST_MESSAGES_DEFAULT;
    if (!Number.isSafeInteger(after) || after < 0) throw new BadRequestError('after must be an integer >= 0');
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > LIST_MESSAGES_MAX) {
      throw new BadRequestError(`limit must be an integer from 1 to ${LIST_MESSAGES_MAX}`);
    }
    await this.row(id, accountId);
    const rows = await this.deps.store.entities.messages(id, after, limit + 1);
    const page = rows.slice(0, limit);
    return {
      object: 'list',
      entity_id: id,
      data: page.map(toMessage),
      has_more: rows.length > limit,
      next_after: page.length ? page[page.length - 1].seq : after,
    };
  }

  async window(id: string, accountId: string): Promise<EntityWindow> {
    const row = await this.row(id, accountId);
    return this.windowOf(row, await this.deps.store.entities.window(id));
  }

  /** The window and every part of the request the next turn sends before its new message (window/next-prompt.ts). */
  async windowPrompt(id: string, accountId: string): Promise<EntityWindowPrompt> {
    const row = await this.row(id, accountId);
    const blocks = await this.deps.store.entities.window(id);
    return { ...(await this.windowOf(row, blocks)), ...(await nextPrompt(this.deps, row, blocks)) };
  }

  private async windowOf(row: EntityRow, blocks: BlockRow[]): Promise<EntityWindow> {
    const limit = await this.modelLimit(row);
    return {
      entity_id: row.id,
      object: 'entity.window',
      budget_tokens: row.budgetTokens,
      tokens: row.windowTokens,
      blocks: blocks.map(toBlock),
      ...(limit === undefined ? {} : { model_limit_tokens: limit }),
    };
  }

  /** The window the model saw when it answered the message at `at` (a seq or a date); see window/at-turn.ts. */
  async windowAt(id: string, at: string, accountId: string): Promise<EntityWindowAt> {
    if (typeof at !== 'string' || at.trim() === '') throw new BadRequestError('at must be a seq or a date');
    return windowAt(this.deps, await this.row(id, accountId), at);
  }

  /** The entity's rotations, oldest first (rotations.ts). */
  async rotations(id: string, accountId: string): Promise<RotationList> {
    return listRotations(this.deps, (await this.row(id, accountId)).id);
  }

  /** Folds now, undoes the last rotation, or writes the newest summary again, under the entity's lease (steer.ts). */
  async rotate(id: string, input: unknown, accountId: string, signal?: AbortSignal): Promise<RotateResult> {
    const checked = checkRotateInput(input);
    return steerRotation(this.deps, await this.row(id, accountId), checked, signal);
  }

  /**
   * What the model's context leaves the window, in the window's own estimated tokens, when it is
   * known (configured or learned) and binds before the budget; the next turn rotates past it.
   */
  private async modelLimit(row: EntityRow): Promise<number | undefined> {
    let fit: RouteFit;
    try {
      // The head as a turn fits it: the instructions and the pinned memory.
      const memory = await pinnedMemory(this.deps, row.id);
      fit = await this.deps.calibration.fit(await this.deps.chatModel(row.model), row.instructionsTokens + (memory?.tokens ?? 0), (row.instructions ? 1 : 0) + (memory ? 1 : 0));
    } catch {
      // A route that cannot be built (a missing base URL) fails the turn with its own error, not the read.
      return undefined;
    }
    if (!fit.limit) return undefined;
    const limit = Math.max(0, fit.limit.cap - fit.limit.perBlock * (row.windowBlocks + 1));
    return limit < row.budgetTokens ? limit : undefined;
  }

  /** Recall offers the model a tool: a route whose model cannot call tools says so when recall is turned on. */
  private async checkCanRecall(modelId: string): Promise<void> {
    const model = await this.deps.chatModel(modelId);
    const why = await model.toolSupport?.();
    if (why) {
      throw new BadRequestError(`recall needs a model that can call tools; ${modelId} (${model.provider}: ${model.modelId}) cannot: ${why}`, {
        hint: 'route the entity model to one that can (mgpt models add ... --route mgpt-1-27b), or leave recall off',
      });
    }
  }

  /** The prompt the entity's next turn starts from (instructions, then the window), for replies that are not stored. */
  async context(id: string, accountId: string): Promise<ChatMessage[]> {
    const row = await this.row(id, accountId);
    const messages = windowMessages(row.instructions, (await loadWindow(this.deps, row)).rendered());
    const memory = await pinnedMemory(this.deps, row.id);
    if (memory) messages.splice(row.instructions ? 1 : 0, 0, { role: 'system', content: memory.text });
    return messages;
  }

  /** One turn, streamed. See turn.ts for the atomicity, lease and idempotency rules. */
  send(id: string, input: SendInput & { extras?: TurnExtras }, accountId: string): AsyncGenerator<TurnEvent> {
    return this.turn({ id, accountId }, input);
  }

  /** A turn on an entity it creates (a branch): the entity is stored by the turn's commit, or not at all. */
  sendCreating(create: EntityImport, input: SendInput & { extras?: TurnExtras }): AsyncGenerator<TurnEvent> {
    return this.turn({ id: create.entity.id, accountId: create.entity.accountId, create }, input);
  }

  private turn(ref: EntityRef, input: SendInput & { extras?: TurnExtras }): AsyncGenerator<TurnEvent> {
    const content = input?.content;
    if (content === undefined || content === null) throw new BadRequestError('content is required');
    if (typeof content !== 'string') throw new BadRequestError('content must be a string');
    if (content.trim() === '') throw new BadRequestError('content is empty');
    const key = input.idempotencyKey;
    if (key !== undefined) checkKey(key);
    let extras = input.sampling ? { ...input.extras, sampling: parseSampling(input.sampling) } : input.extras;
    if (input.buffered) extras = { ...extras, buffered: true };
    if (input.memoryTool !== undefined && typeof input.memoryTool !== 'boolean') throw new BadRequestError('memory_tool must be a boolean');
    // Absent: the entity's own setting (remember.ts); either way, this turn only.
    if (input.memoryTool !== undefined) extras = { ...extras, memoryTool: input.memoryTool };
    const writtenAt = input.at === undefined ? undefined : writtenAtOf(input.at, this.deps.clock);
    return runTurn(this.deps, ref, { content, key, contentSha256: sha256(content), signal: input.signal, extras, writtenAt });
  }

  /** One exchange recorded without a model call, under the lease (exchange.ts). */
  async appendExchange(id: string, input: unknown, accountId: string, keyId?: string): Promise<ExchangeResult> {
    return appendExchange(this.deps, await this.row(id, accountId), input, keyId);
  }

  /** What the ranked retriever finds in the whole transcript, within a token budget (exchange.ts). */
  async recall(id: string, input: RecallInput, accountId: string): Promise<RecallResult> {
    return recallFor(this.deps, await this.row(id, accountId), input);
  }

  /** Streams the export (JSON or tar); see export.ts. */
  async export(id: string, format: ExportFormat, accountId: string): Promise<AsyncGenerator<Uint8Array>> {
    if (format !== 'json' && format !== 'tar') throw new BadRequestError('export format must be json or tar');
    // The head and the window are read in one snapshot, now: a turn that lands before the first
    // byte is read must not pair this head with a newer window.
    const snapshot = typeof id === 'string' ? await this.deps.store.entities.snapshot(accountId, id) : undefined;
    if (!snapshot) throw notFound(id);
    return exportEntity(this.deps, snapshot, format);
  }

  import(bytes: Uint8Array, format: ExportFormat, opts: ImportOptions, accountId: string): Promise<ImportedEntity> {
    return importEntity(this.deps, bytes, format, opts, accountId);
  }

  /** The entity row, or 404: another account's entity is indistinguishable from a missing one. */
  async row(id: string, accountId: string): Promise<EntityRow> {
    const row = typeof id === 'string' ? await this.deps.store.entities.get(accountId, id) : undefined;
    if (!row) throw notFound(id);
    return row;
  }
}

export function notFound(id: string): NotFoundError {
  return new NotFoundError(`no entity ${id} on this account`, { hint: 'list entities with: mgpt entities list' });
}
