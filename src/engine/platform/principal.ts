import type { RateLimits } from '../../core/rate-limits.js';

/** Who a request acts for. */
export interface Principal {
  keyId: string;
  accountId: string;
  userId: string;
  scopes: string[];
  /** The key's limits, else its account's (null: none). */
  limits: RateLimits;
}
