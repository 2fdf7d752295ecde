/** What `GET /v1/usage` (an extension) sums the account's billing ledger by. */
export const USAGE_GROUPS = ['day', 'model', 'entity', 'key'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

/** The query: the grouping (default day) and the first time counted (ISO 8601; default all). */
export interface UsageQuery {
  by?: string;
  since?: string;
}

/** The ledger's sums for one group: charges, billed tokens and dollars. */
export interface UsageTotals {
  charges: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export interface UsageLine extends UsageTotals {
  /**
   * The day (YYYY-MM-DD, UTC), the model, the entity id or the API key id; null for charges with
   * no entity, or by key for charges no key made (the local backend's own use).
   */
  key: string | null;
  /** The entity's name, when grouped by entity and it has one (a deleted entity's charges keep only its id). */
  name?: string | null;
}

/** The billed truth: every charge the account's ledger holds, summed. */
export interface UsageReport extends UsageTotals {
  object: 'usage';
  by: UsageGroup;
  since: string | null;
  data: UsageLine[];
}
