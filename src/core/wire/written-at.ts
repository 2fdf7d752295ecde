import { BadRequestError } from '../errors.js';

/**
 * The time a message was written, when the caller gives it (`at` on POST /v1/entities/{id}/messages,
 * `mgpt send --at`, a batch line's `at`): an ISO 8601 date, or a date and time with `Z` or an
 * offset (a time without one would mean the client's zone on one machine and the server's on
 * another). Answered as the UTC time the store keeps (`2024-05-07T10:00:00.000Z`); a date alone
 * is its midnight UTC.
 */
export function parseWrittenAt(value: unknown): string {
  if (typeof value !== 'string') throw badAt(`at must be a string, not ${value === null ? 'null' : typeof value}`);
  const m = ISO.exec(value.trim());
  if (!m) throw badAt(`at ${JSON.stringify(value)} is not an ISO 8601 time`);
  const [, y, mo, d, time, zone] = m;
  if (time && !zone) throw badAt(`at ${JSON.stringify(value)} has no time zone`);
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) throw badAt(`at ${JSON.stringify(value)} is not a date of the calendar`);
  const ms = Date.parse(`${y}-${mo}-${d}T${time ? clockTime(time) : '00:00:00'}${zone ? zoneOf(zone) : 'Z'}`);
  if (Number.isNaN(ms)) throw badAt(`at ${JSON.stringify(value)} is not a time of day`);
  return new Date(ms).toISOString();
}

/** hh:mm[:ss[.fff…]] as ECMAScript's date format reads it: seconds given, at most milliseconds. */
function clockTime(time: string): string {
  const [hm, frac] = time.split('.');
  return `${hm.length === 5 ? `${hm}:00` : hm}${frac ? `.${frac.slice(0, 3)}` : ''}`;
}

/** Z, or ±hh:mm (an offset written ±hhmm gets its colon). */
function zoneOf(zone: string): string {
  return zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
}

/** YYYY-MM-DD, then optionally Thh:mm[:ss[.fff]] and Z or ±hh:mm. */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

const AT_HINT = 'give the time the message was written as 2024-05-07T10:00:00Z (or with an offset, +02:00), or a date alone (2024-05-07, its midnight UTC)';

function badAt(message: string): BadRequestError {
  return new BadRequestError(message, { hint: AT_HINT });
}
