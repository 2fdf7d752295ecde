/**
 * The dates the engine takes from a user (`window --at`, `import --since`): ISO 8601 with `Z` or
 * an offset, or a bare date (midnight UTC). A date-time without a zone is refused rather than read
 * in the reading process's time zone: a local and a remote backend in different zones would
 * otherwise take the same text for different instants.
 */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** What a refused date is told to look like. */
export const ZONED_DATE_HINT = 'give a date as 2026-11-26 (UTC) or a time with its zone, as 2026-11-26T10:00:00Z or 2026-11-26T11:00:00+01:00';

/** The instant `text` names (ms since the epoch), or undefined when it is not one of the accepted forms or no such day exists. */
export function parseZonedDate(text: string): number | undefined {
  const m = DATE.exec(text) ?? DATE_TIME.exec(text);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d) return undefined;
  const t = Date.parse(text.toUpperCase());
  return Number.isNaN(t) ? undefined : t;
}
