import type { RateLimits } from '../core/rate-limits.js';

/**
 * `rpm = …, tpm = …` for the limits given (an absent one is left as it is), with the values in
 * order; `param(i)` writes the i-th placeholder (SQLite `?`, PostgreSQL `$i`).
 */
export function limitAssignments(limits: Partial<RateLimits>, param: (i: number) => string): { set: string; values: Array<number | null> } {
  const fields = (['rpm', 'tpm'] as const).filter((f) => limits[f] !== undefined);
  return { set: fields.map((f, i) => `${f} = ${param(i + 1)}`).join(', '), values: fields.map((f) => limits[f] ?? null) };
}
