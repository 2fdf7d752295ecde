import type { Context } from 'hono';
import type { Env } from './env.js';

/**
 * A request header as the Fetch API's `Headers.get` gives it (case-insensitive; repeated values
 * joined with ", "; surrounding whitespace dropped), read from node's raw header list when served
 * by node-server. `c.req.header()` there builds a WHATWG Headers object of every header first,
 * which costs more per request than the rest of the key check.
 */
export function header(c: Context<Env>, headerName: string): string | undefined {
  const raw = c.env?.incoming?.rawHeaders;
  if (!raw) return c.req.header(headerName);
  const name = headerName.toLowerCase();
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const key = raw[i];
    if (key.length !== name.length || key.toLowerCase() !== name) continue;
    const v = trimHttpWhitespace(raw[i + 1]);
    value = value === undefined ? v : `${value}, ${v}`;
  }
  return value;
}

const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

function trimHttpWhitespace(v: string): string {
  return v.length > 0 && (isWs(v.charCodeAt(0)) || isWs(v.charCodeAt(v.length - 1))) ? v.replace(EDGE_WHITESPACE, '') : v;
}

function isWs(ch: number): boolean {
  return ch === 0x20 || ch === 0x09 || ch === 0x0a || ch === 0x0d;
}
