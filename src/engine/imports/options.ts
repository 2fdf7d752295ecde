import { CHAT_SOURCES, type ChatImportOptions, type ChatSource } from '../../core/wire/chat-import.js';
import { BadRequestError } from '../../core/errors.js';
import { ZONED_DATE_HINT, parseZonedDate } from '../support/zoned-date.js';

/** Checked options: what `POST /v1/imports` and the CLI pass in, refused the same way. */
export interface ImportPlan {
  from: ChatSource | 'auto';
  into?: string;
  only: Set<string>;
  since?: number;
  dryRun: boolean;
  update: boolean;
  summarize: boolean;
}

/** The options checked once, at the edge of the engine: bad ones are a 400 before anything is read. */
export function checkImportOptions(o: ChatImportOptions): ImportPlan {
  const from = o.from ?? 'auto';
  if (from !== 'auto' && !(CHAT_SOURCES as readonly string[]).includes(from)) {
    throw new BadRequestError(`unknown export format ${JSON.stringify(from)}`, { hint: 'use --from chatgpt, claude, openwebui or auto' });
  }
  let since: number | undefined;
  if (o.since !== undefined) {
    since = typeof o.since === 'string' ? parseZonedDate(o.since) : undefined;
    if (since === undefined) throw new BadRequestError(`--since ${JSON.stringify(o.since)} is not a date with a zone`, { hint: ZONED_DATE_HINT });
  }
  if (o.into !== undefined && (typeof o.into !== 'string' || o.into.trim() === '')) throw new BadRequestError('--into needs an entity name or id');
  if (o.only !== undefined && (!Array.isArray(o.only) || o.only.some((x) => typeof x !== 'string' || x === ''))) {
    throw new BadRequestError('--only takes conversation ids or titles');
  }
  return { from, into: o.into, only: new Set(o.only ?? []), since, dryRun: o.dryRun === true, update: o.update === true, summarize: o.summarize === true };
}

