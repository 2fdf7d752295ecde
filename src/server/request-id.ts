import { randomUUID } from 'node:crypto';

const SANE = /^[\x21-\x7e]{1,200}$/;

/** The caller's X-Request-Id when it is sane (1-200 visible ASCII characters), else a fresh id. */
export function requestIdFrom(header: string | undefined): { id: string; fromCaller: boolean } {
  return header !== undefined && SANE.test(header) ? { id: header, fromCaller: true } : { id: randomUUID(), fromCaller: false };
}

const UNIVERSE_PREFIXES = ['/api/mgpt/', '/backend-api/mgpt/'];

/** An error body in the shape of the path's route family: `{ detail }` on universe routes, `{ error }` elsewhere. */
export function errorBodyFor(path: string | undefined, message: string): Record<string, string> {
  return path && UNIVERSE_PREFIXES.some((p) => path.startsWith(p)) ? { detail: message } : { error: message };
}
