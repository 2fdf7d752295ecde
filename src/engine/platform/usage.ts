import { BadRequestError } from '../../core/errors.js';
import { roundUsd } from '../../core/models.js';
import { USAGE_GROUPS, type UsageGroup, type UsageLine, type UsageQuery, type UsageReport } from '../../core/wire/usage.js';
import type { LedgerSum } from '../../store/types.js';
import type { EngineDeps } from '../deps.js';

/**
 * `GET /v1/usage` and `mgpt usage`: the account's billing ledger summed (the billed truth: every
 * charge of every turn, completion and universe reply, never an estimate from the logs).
 */
export class UsageService {
  constructor(private readonly deps: Pick<EngineDeps, 'store'>) {}

  async report(q: UsageQuery, accountId: string): Promise<UsageReport> {
    const by = checkGroup(q.by);
    const since = checkSince(q.since);
    const sums = await this.deps.store.accounts.ledgerSums({ accountId, by, ...(since ? { since } : {}) });
    const data = by === 'entity' ? await this.named(sums, accountId) : sums.map(line);
    return { object: 'usage', by, since: since ?? null, data, ...totalOf(data) };
  }

  /** Lines by entity carry its name (a deleted entity's charges keep only its id). */
  private async named(sums: LedgerSum[], accountId: string): Promise<UsageLine[]> {
    const entities = this.deps.store.entities;
    return Promise.all(sums.map(async (s) => ({ ...line(s), name: s.group === null ? null : ((await entities.get(accountId, s.group))?.name ?? null) })));
  }
}

function line(s: LedgerSum): UsageLine {
  return { key: s.group, charges: Number(s.charges), input_tokens: Number(s.inputTokens), output_tokens: Number(s.outputTokens), cost_usd: roundUsd(Number(s.costUsd)) };
}

function totalOf(data: UsageLine[]): Pick<UsageReport, 'charges' | 'input_tokens' | 'output_tokens' | 'cost_usd'> {
  const sum = (f: (l: UsageLine) => number) => data.reduce((n, l) => n + f(l), 0);
  return { charges: sum((l) => l.charges), input_tokens: sum((l) => l.input_tokens), output_tokens: sum((l) => l.output_tokens), cost_usd: roundUsd(sum((l) => l.cost_usd)) };
}

function checkGroup(by: unknown): UsageGroup {
  if (by === undefined) return 'day';
  if (typeof by === 'string' && (USAGE_GROUPS as readonly string[]).includes(by)) return by as UsageGroup;
  throw new BadRequestError(`by must be ${USAGE_GROUPS.join(', ')}, got ${JSON.stringify(by)}`);
}

/** A date or time (ISO 8601), as the ledger writes its times (UTC, so they compare as text). */
function checkSince(since: unknown): string | undefined {
  if (since === undefined) return undefined;
  const t = typeof since === 'string' ? Date.parse(since) : NaN;
  if (Number.isNaN(t)) throw new BadRequestError(`since must be a date or an ISO 8601 time, got ${JSON.stringify(since)}`, { hint: 'for example 2026-11-01 or 2026-11-01T09:00:00Z' });
  return new Date(t).toISOString();
}
