import type { ChunkEvent } from '../../core/wire/completion-stream.js';
import type { GenerationResponse, RespondInput } from '../../core/wire/universe-types.js';
import type { TokenAllowance } from '../../core/rate-limits.js';
import type { EngineDeps } from '../deps.js';
import type { EntityService } from '../entities/entities.js';
import type { AccountService } from '../platform/accounts.js';
import type { RespondOptions, ResponseDelta } from '../universes/respond.js';
import type { UniverseService } from '../universes/universes.js';
import type { ClientMessage } from './chat-facade.js';
import type { ChatOptions } from './chat-options.js';
import type { TurnKind } from './chat-policy.js';

/** The services the facade calls (the engine's own, passed by Engine): only what it uses of each. */
export interface FacadeServices {
  entities: Pick<EntityService, 'list' | 'resolve' | 'get' | 'row' | 'send' | 'sendCreating' | 'context' | 'messages'>;
  universes: Pick<UniverseService, 'resolve'>;
  accounts: Pick<AccountService, 'find'>;
  /** A universe turn as events (Engine.respondEvents). */
  respondEvents(input: RespondInput, opts: RespondOptions): AsyncGenerator<ResponseDelta, GenerationResponse>;
}

/** What the facade's stateless answers, fits and branches read of the engine's shared parts. */
export type FacadeDeps = Pick<EngineDeps, 'store' | 'clock' | 'newId' | 'prices' | 'chatModel' | 'events' | 'calibration' | 'namedModels'>;

export interface FacadeModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

/** A POST /v1/chat/completions request as it came: its body is parsed by ChatService.chat. */
export interface ChatRequest extends ChatCall {
  /** The request body: model, messages, sampling fields, tools. */
  body: Record<string, unknown>;
}

/** A chat in the engine's terms: the model asked for, the messages, and the options (sampling, tools). */
export interface ParsedChat {
  model: string;
  messages: ClientMessage[];
  options: ChatOptions;
}

/** Who asks for a chat and how: everything of a request but its body. */
export interface ChatCall {
  idempotencyKey?: string;
  /** Branch (a new entity) instead of a stateless answer when the history contradicts the transcript. */
  branch: boolean;
  /** `Mgpt-Request: side`: the client says this is a side request (a title, tags...). */
  side?: string;
  /** The server's policy (mgpt serve --strict-system, --side-pattern). */
  policy?: ChatPolicyOptions;
  accountId: string;
  userId: string;
  signal?: AbortSignal;
  /** The request's share of its key's tokens per minute (see TokenAllowance). */
  allowance?: TokenAllowance;
  /** The API key the request came with, recorded on its charge (none: the local backend's own use). */
  keyId?: string;
}

export interface ChatPolicyOptions {
  /** Refuse a client system message that differs from the entity's instructions (the old 400). */
  strictSystem?: boolean;
  /** Side requests beyond the known clients': a last user message matching one is not a turn. */
  sidePatterns?: RegExp[];
}

export interface ChatReply {
  /** The entity the turn went to (a new one when it branched). */
  entityId?: string;
  /** Set when the turn branched: the entity it was forked from. */
  branchedFrom?: string;
  /** What the request became (the Mgpt-Turn header). */
  turn: TurnKind;
  /** A stateless answer that left out the chat's oldest messages to fit the model: how many (the Mgpt-Dropped-Messages header). */
  dropped?: number;
  /** How many earlier messages automatic recall put in the stored turn's prompt (the Mgpt-Recalled header), when any. */
  recalled?: number;
  events: AsyncGenerator<ChunkEvent>;
}

