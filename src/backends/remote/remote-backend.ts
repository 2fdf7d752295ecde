import type { UsageQuery, UsageReport } from '../../core/wire/usage.js';
import { brokenStream, turnEvents } from './turn-stream.js';
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { type ChatImportOptions, type ChatImportResult, importQuery } from '../../core/wire/chat-import.js';

/** An import of a large export answers when it is done: minutes, not the client's usual two. */
const IMPORT_TIMEOUT_MS = 60 * 60 * 1000;
import type { Backend, ChatCompletion, CompleteInput, CompleteOptions, ImportOptions, ImportedEntity, KeyIdentity, RespondOptions } from '../../core/backend.js';
import { completionBody } from '../../core/wire/openai.js';
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
} from '../../core/wire/entity-types.js';
import type { EntityWindowAt, EntityWindowPrompt, RotateInput, RotateResult, RotationList } from '../../core/wire/rotation-types.js';
import { BadRequestError, CancelledError, ConfigError, MgptError, NotSupportedError, ROTATION_CANCELLED, TURN_CANCELLED, isAbortError } from '../../core/errors.js';
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
} from '../../core/wire/universe-types.js';
import { HttpClient, type HttpOptions } from './http.js';
import type { MemoryBlock, MemoryHistory, MemoryList } from '../../core/wire/memory.js';
import type { ExchangeInput, ExchangeResult, RecallInput, RecallResult } from '../../core/wire/exchange.js';
import { pickByRef } from '../../core/ref.js';
import { UUID } from '../../core/ids.js';
import { LIST_ENTITIES_MAX, nameTaken } from '../../core/wire/entity-types.js';

export interface RemoteOptions extends HttpOptions {
  /** `{base_url}`: the universe API lives under `/api/mgpt` (or `/backend-api/mgpt` with `dev`). */
  baseUrl?: string;
  /** `{entities_url}`, ending in `/v1`. */
  entitiesUrl?: string;
  dev?: boolean;
  /** The caller's user id, which the logs endpoint scopes by. */
  userId?: string;
  /**
   * Refuse to create an entity with a name another has (the CLI's rule). mgpt serve refuses one
   * itself; the seed's wire allows duplicates, so against another server this checks the
   * listing first: its newest 200 entities.
   */
  uniqueNames?: boolean;
}

/**
 * The wire API over HTTP against mgpt serve or the hosted platform. It has no local administration
 * (accounts, keys, prompts, universes read back, import): no wire contract carries those.
 */
export class RemoteBackend implements Backend {
  readonly kind = 'remote' as const;
  private readonly http: HttpClient;

  constructor(private readonly opts: RemoteOptions) {
    this.http = new HttpClient(opts);
  }

  private api(path: string): string {
    if (!this.opts.baseUrl) {
      throw new ConfigError('no base URL for the universe API', { hint: 'mgpt config set baseUrl https://host (or MGPT_BASE_URL)' });
    }
    return `${this.opts.baseUrl.replace(/\/+$/, '')}${this.opts.dev ? '/backend-api/mgpt' : '/api/mgpt'}${path}`;
  }

  private ent(path: string): string {
    if (!this.opts.entitiesUrl) {
      throw new ConfigError('no entities URL', { hint: 'mgpt config set entitiesUrl https://host/v1 (or MGPT_ENTITIES_URL)' });
    }
    return `${this.opts.entitiesUrl.replace(/\/+$/, '')}${path}`;
  }

  async createEntity(input: CreateEntityInput): Promise<CreatedEntity> {
    if (this.opts.uniqueNames && typeof input.name === 'string' && input.name) {
      const name = input.name;
      if ((await this.listEntities()).data.some((e) => e.name === name)) throw nameTaken(name);
    }
    return this.http.json('POST', this.ent('/entities'), { json: input });
  }
  /** The wire has no paging: the newest 200, whatever the page asks. */
  listEntities(): Promise<EntityList> {
    return this.http.json('GET', this.ent('/entities'));
  }
  /** The wire cannot list universes, so only a whole id names one. */
  async resolveUniverse(ref: string): Promise<string> {
    if (UUID.test(ref)) return ref;
    throw new NotSupportedError(`${JSON.stringify(ref)} is not a universe id: the remote API cannot look universes up by name or prefix`, {
      hint: 'give the full universe id (mgpt universes list works on the server host)',
    });
  }
  /** Names and id prefixes resolve among what the wire lists: the 200 most recently active. */
  async resolveEntity(ref: string): Promise<Entity> {
    if (UUID.test(ref)) return this.getEntity(ref);
    const listed = (await this.listEntities()).data;
    const hit = pickByRef('entity', ref, listed, `the server lists only the ${LIST_ENTITIES_MAX} most recently active entities (the wire contract's cap); give the full id`);
    return this.getEntity(hit.id);
  }
  getEntity(id: string): Promise<Entity> {
    return this.http.json('GET', this.ent(`/entities/${encodeURIComponent(id)}`));
  }
  /** PATCH /entities/{id}: an extension of mgpt serve, not in the seed (docs/design.md#extensions-beyond-the-wire-contracts). */
  updateEntity(id: string, input: UpdateEntityInput): Promise<Entity> {
    return this.http.json('PATCH', this.ent(`/entities/${encodeURIComponent(id)}`), { json: input });
  }
  deleteEntity(id: string): Promise<DeletedEntity> {
    return this.http.json('DELETE', this.ent(`/entities/${encodeURIComponent(id)}`));
  }
  listMessages(id: string, input: ListMessagesInput = {}): Promise<MessageList> {
    const q = new URLSearchParams();
    if (input.after !== undefined) q.set('after', String(input.after));
    if (input.limit !== undefined) q.set('limit', String(input.limit));
    return this.http.json('GET', this.ent(`/entities/${encodeURIComponent(id)}/messages?${q}`));
  }
  /** GET /v1/search: an extension of mgpt serve, not in the seed (docs/design.md#extensions-beyond-the-wire-contracts). */
  search(input: SearchInput): Promise<SearchList> {
    const q = new URLSearchParams({ q: input.q });
    if (input.source !== undefined) q.set('source', input.source);
    for (const id of input.entity_ids ?? []) q.append('entity_id', id);
    for (const id of input.universe_ids ?? []) q.append('universe_id', id);
    if (input.role !== undefined) q.set('role', input.role);
    if (input.since !== undefined) q.set('since', input.since);
    if (input.limit !== undefined) q.set('limit', String(input.limit));
    if (input.mode !== undefined) q.set('mode', input.mode);
    return this.http.json('GET', this.ent(`/search?${q}`));
  }
  getWindow(id: string): Promise<EntityWindow> {
    return this.http.json('GET', this.ent(`/entities/${encodeURIComponent(id)}/window`));
  }
  getWindowPrompt(id: string): Promise<EntityWindowPrompt> {
    return this.http.json('GET', this.ent(`/entities/${encodeURIComponent(id)}/window?prompt=true`));
  }
  getWindowAt(id: string, at: string): Promise<EntityWindowAt> {
    return this.http.json('GET', this.ent(`/entities/${encodeURIComponent(id)}/window?${new URLSearchParams({ at })}`));
  }
  listRotations(id: string): Promise<RotationList> {
    return this.http.json('GET', this.ent(`/entities/${encodeURIComponent(id)}/rotations`));
  }
  async rotate(id: string, input: RotateInput, opts: { signal?: AbortSignal } = {}): Promise<RotateResult> {
    try {
      return await this.http.json('POST', this.ent(`/entities/${encodeURIComponent(id)}/rotations`), { json: input, signal: opts.signal });
    } catch (err) {
      // Aborting the request closes the connection: the server cancels the steer and writes nothing.
      throw opts.signal?.aborted || isAbortError(err) ? new CancelledError(ROTATION_CANCELLED) : err;
    }
  }
  /** Extensions of mgpt serve for MCP clients (docs/mcp.md): the ranked retriever, and an exchange stored without a model call. */
  recall(id: string, input: RecallInput): Promise<RecallResult> {
    const q = new URLSearchParams({ q: input.q });
    if (input.max_tokens !== undefined) q.set('max_tokens', String(input.max_tokens));
    return this.http.json('GET', this.ent(`/entities/${encodeURIComponent(id)}/recall?${q}`));
  }
  appendExchange(id: string, input: ExchangeInput): Promise<ExchangeResult> {
    return this.http.json('POST', this.ent(`/entities/${encodeURIComponent(id)}/exchanges`), { json: input });
  }
  /** Pinned memory: extensions of mgpt serve, not in the seed. */
  listMemory(id: string): Promise<MemoryList> {
    return this.http.json('GET', this.memoryUrl(id));
  }
  memoryHistory(id: string): Promise<MemoryHistory> {
    return this.http.json('GET', `${this.memoryUrl(id)}?history=true`);
  }
  getMemory(id: string, label: string): Promise<MemoryBlock> {
    return this.http.json('GET', this.memoryUrl(id, label));
  }
  setMemory(id: string, label: string, text: string): Promise<MemoryBlock> {
    return this.http.json('PUT', this.memoryUrl(id, label), { json: { text } });
  }
  async deleteMemory(id: string, label: string): Promise<void> {
    const res = await this.http.send('DELETE', this.memoryUrl(id, label));
    await res.body.dump();
  }
  private memoryUrl(id: string, label?: string): string {
    return this.ent(`/entities/${encodeURIComponent(id)}/memory${label === undefined ? '' : `/${encodeURIComponent(label)}`}`);
  }

  /** The SSE stream decoded into the same events the local backend yields. */
  async *sendMessage(id: string, input: SendInput): AsyncGenerator<TurnEvent> {
    if (typeof input?.content !== 'string') throw new BadRequestError('content is required');
    // A key on every send makes the client's own retries safe.
    const key = input.idempotencyKey ?? `mgpt-${randomUUID()}`;
    const res = await this.http
      .send('POST', this.ent(`/entities/${encodeURIComponent(id)}/messages`), {
        json: { content: input.content, stream: true, ...input.sampling, ...(input.memoryTool !== undefined ? { memory_tool: input.memoryTool } : {}), ...(input.at !== undefined ? { at: input.at } : {}) },
        headers: { 'idempotency-key': key, accept: 'text/event-stream' },
        signal: input.signal,
      })
      .catch((err: unknown) => {
        throw cancelledTurn(err, input.signal) ?? err;
      });
    const replayed = res.headers['idempotent-replayed'] === 'true';
    try {
      yield* turnEvents(res.body, id, replayed);
    } catch (err) {
      // Ctrl-C: the server drops the turn when the connection goes, as the local engine does.
      const cancelled = cancelledTurn(err, input.signal);
      if (cancelled) throw cancelled;
      // A connection cut mid-stream (the server died) is a server failure, as an early [DONE]-less end is.
      if (err instanceof MgptError) throw err;
      throw brokenStream(err);
    } finally {
      res.body.destroy();
    }
  }

  /** POST /v1/chat/completions (the facade, beside /v1/entities), streamed. */
  async complete(input: CompleteInput, opts: CompleteOptions = {}): Promise<ChatCompletion> {
    const res = await this.http
      .send('POST', this.ent('/chat/completions'), { json: completionBody(input), headers: { accept: 'text/event-stream' }, signal: opts.signal })
      .catch((err: unknown) => {
        throw cancelledTurn(err, opts.signal) ?? err;
      });
    try {
      for await (const ev of turnEvents(res.body, '', false)) {
        if (ev.type === 'delta') opts.onDelta?.(ev.text);
        else if (ev.type === 'done') {
          const { entity_id: _none, ...completion } = ev.completion;
          return completion;
        }
      }
      throw brokenStream();
    } catch (err) {
      throw cancelledTurn(err, opts.signal) ?? err;
    } finally {
      res.body.destroy();
    }
  }

  async *exportEntity(id: string, format: ExportFormat): AsyncGenerator<Uint8Array> {
    const res = await this.http.send('GET', this.ent(`/entities/${encodeURIComponent(id)}/export`), {
      headers: { accept: format === 'tar' ? 'application/x-svc-entity' : 'application/json' },
    });
    for await (const piece of res.body) yield piece as Uint8Array;
  }

  /** POST /v1/imports (an extension of mgpt serve): the file streamed as the raw body, the options in the query. */
  async importChats(file: string, opts: ChatImportOptions, _onProgress?: unknown, signal?: AbortSignal): Promise<ChatImportResult> {
    const q = importQuery(opts).toString();
    return this.http.json('POST', this.ent(`/imports${q ? `?${q}` : ''}`), {
      raw: { open: () => createReadStream(file), type: 'application/octet-stream' },
      // A re-sent import writes nothing twice: conversations already imported are skipped by id.
      idempotent: true,
      timeoutMs: IMPORT_TIMEOUT_MS,
      signal,
    });
  }

  /** The archive as the body of `POST /v1/imports?from=mgpt`; a taken name is numbered when names are unique here (the CLI's rule). */
  importArchive(bytes: Uint8Array, format: ExportFormat, opts: ImportOptions = {}): Promise<ImportedEntity> {
    const q = new URLSearchParams({ from: 'mgpt', format });
    if (opts.keepId) q.set('keep_id', 'true');
    if (opts.name !== undefined) q.set('name', opts.name);
    if (this.opts.uniqueNames) q.set('unique_name', 'true');
    const type = format === 'tar' ? 'application/x-svc-entity' : 'application/json';
    return this.http.json('POST', this.ent(`/imports?${q}`), { raw: { open: () => Readable.from([Buffer.from(bytes)]), type }, timeoutMs: IMPORT_TIMEOUT_MS });
  }
  createUniverse(input: CreateUniverseInput): Promise<CreatedUniverse> {
    return this.http.json('POST', this.api('/universes'), { json: input });
  }
  async respond(input: RespondInput, opts: RespondOptions = {}): Promise<GenerationResponse> {
    // A requestId on every call makes the client's own retries after a 5xx safe: the server deduplicates by it.
    const body = input.requestId === undefined ? { ...input, requestId: `mgpt-${randomUUID()}` } : input;
    const res = await this.http.json<GenerationResponse>('POST', this.api('/responses'), { json: body, signal: opts.signal, idempotent: true });
    if (opts.onDelta && res.assistantRaw) opts.onDelta(res.assistantRaw);
    return res;
  }
  generateImage(input: ImageRequest, opts: { signal?: AbortSignal } = {}): Promise<ImageResponse> {
    return this.http.json('POST', this.api('/images'), { json: input, signal: opts.signal });
  }
  /**
   * Whether the key may call the universe contract: an empty POST /responses, which a server that
   * accepts the key refuses with 400 before it does anything (`mgpt login` checks a key this way).
   */
  /** The key's id, account and scopes: `GET /v1/whoami`, an extension of mgpt serve (404 elsewhere). */
  whoami(): Promise<KeyIdentity> {
    return this.http.json('GET', this.ent('/whoami'));
  }
  async checkUniverseAccess(): Promise<void> {
    await this.http.json('POST', this.api('/responses'), { json: {} }).catch((err) => {
      if (!(err instanceof BadRequestError)) throw err;
    });
  }
  /** GET /v1/usage on the entity API (an extension of mgpt serve). */
  usage(query: UsageQuery): Promise<UsageReport> {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, v);
    return this.http.json('GET', this.ent(`/usage${q.size ? `?${q}` : ''}`));
  }
  async listLogs(query: LogQuery): Promise<LogList> {
    const q = await this.logQuery();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
    return this.http.json('GET', this.api(`/logs?${q}`));
  }
  async getLog(id: string): Promise<LogDetail> {
    const q = await this.logQuery();
    q.set('identifier', id);
    return this.http.json('GET', this.api(`/logs?${q}`));
  }

  /** The logs endpoint's owner: the configured userId, else the key's own user (GET /v1/whoami). */
  private async logQuery(): Promise<URLSearchParams> {
    this.keyUser ??= this.opts.userId ?? (await this.whoami().catch(() => undefined))?.user;
    if (!this.keyUser) {
      throw new ConfigError('the logs endpoint needs your user id, and the server does not say whose key this is', {
        hint: 'mgpt config set userId UUID (or MGPT_USER_ID); universes create --json shows it',
      });
    }
    return new URLSearchParams({ ownerUserId: this.keyUser });
  }
  private keyUser?: string;

  async close(): Promise<void> {}
}

function cancelledTurn(err: unknown, signal?: AbortSignal): CancelledError | undefined {
  return signal?.aborted || isAbortError(err) ? new CancelledError(TURN_CANCELLED) : undefined;
}
