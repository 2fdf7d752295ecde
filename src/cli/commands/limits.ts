import type { Command } from 'commander';
import type { RateLimits } from '../../core/rate-limits.js';
import { BadRequestError } from '../../core/errors.js';

/** `--rpm` and `--tpm` as typed. */
export interface LimitOptions {
  rpm?: string;
  tpm?: string;
}

/**
 * The limits the flags give: a whole number, or `none` to clear one (the engine checks the
 * range). An update with neither flag would change nothing: it says so.
 */
export function limitsOf(o: LimitOptions, update = false): Partial<RateLimits> {
  const out: Partial<RateLimits> = {};
  for (const name of ['rpm', 'tpm'] as const) {
    const v = o[name]?.trim();
    if (v === undefined) continue;
    if (v.toLowerCase() === 'none') out[name] = null;
    else if (/^\d+$/.test(v)) out[name] = Number(v);
    else throw new BadRequestError(`--${name} must be a whole number or none, got ${JSON.stringify(v)}`);
  }
  if (update && !Object.keys(out).length) throw new BadRequestError('nothing to update', { hint: 'give --rpm N, --tpm N, or none to clear one' });
  return out;
}

/** `--rpm` and `--tpm` on a command; `none` clears one, and then `without` applies. */
export function limitFlags(cmd: Command, without: string): Command {
  return cmd
    .option('--rpm <n>', `requests per minute that call a model or search; none: ${without}`)
    .option('--tpm <n>', `billed tokens per minute; none: ${without}`);
}

/** A limit in a table: the number, or what applies without one. */
export function limitText(v: number | null, without: string): string {
  return v === null ? without : String(v);
}
