import type { TokenAllowance } from '../../../core/rate-limits.js';
import type { EntityService } from '../../entities/entities.js';
import type { FacadeServices } from '../chat-types.js';

/** What the Responses facade calls of the engine: the facade's entity operations, and rotate (compact). */
export type ResponsesEngine = Pick<FacadeServices, 'entities'> & { entities: Pick<EntityService, 'rotate'> };

/** Who asks for a response and how: everything of a request but its body. */
export interface ResponsesCall {
  /** The new response's id (`resp_…`), chosen before the turn so a branch can be named after it. */
  responseId: string;
  idempotencyKey?: string;
  accountId: string;
  userId: string;
  signal?: AbortSignal;
  /** The request's share of its key's tokens per minute (see TokenAllowance). */
  allowance?: TokenAllowance;
  /** The API key the request came with, recorded on its charge (none: the local backend's own use). */
  keyId?: string;
}
