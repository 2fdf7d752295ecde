import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { BadRequestError, CancelledError, MgptError, PayloadTooLargeError } from '../core/errors.js';
import { largeWork } from '../core/lane.js';
import type { Env } from './env.js';
import { header } from './headers.js';

/** Reads a request's JSON body (a route calls it after its key and rate checks, so a refused request's body is never read). */
export type BodyReader = (c: Context<Env>) => Promise<unknown>;

/**
 * The JSON body reader: application/json only, at most `limit` bytes (413 above). Not Hono's
 * bodyLimit middleware: it reads through the Web Request, which node-server then builds for every
 * body (a stream adapter and a Request per body cost more than the parse), and it would run before
 * the key check instead of where the route reads.
 */
export function jsonBody(limit: number): BodyReader {
  return async (c) => {
    const declared = Number(header(c, 'content-length') ?? 0);
    if (declared > limit) throw new PayloadTooLargeError(`request body over ${limit} bytes`);
    const type = header(c, 'content-type') ?? '';
    if (!/^application\/json\b/i.test(type)) throw new BadRequestError('Content-Type must be application/json');
    const incoming = c.env?.incoming;
    // Under node-server, read the socket's stream directly: a Web Request per body costs more than the parse.
    const buf = incoming ? await readLimited(incoming, limit) : new Uint8Array(await c.req.arrayBuffer());
    if (buf.length > limit) throw new PayloadTooLargeError(`request body over ${limit} bytes`);
    // Large bodies are parsed one at a time, each in a turn of the event loop of its own.
    return buf.length > LARGE_BODY_BYTES ? largeWork.run(async () => parseJson(buf)) : parseJson(buf);
  };
}

/**
 * An error answer on a connection whose body was not read (a 413) must close it: kept alive, the
 * unread rest of the body would be taken for the next request and reset it (listen.ts lingers so
 * the client can read the answer). Every contract's error answer goes through this.
 */
export function closeIfBodyUnread(res: Response, err: unknown): Response {
  if (err instanceof PayloadTooLargeError) res.headers.set('Connection', 'close');
  return res;
}

/** A body this large takes milliseconds to decode and parse (and more to check). */
const LARGE_BODY_BYTES = 256 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseJson(buf: Uint8Array): unknown {
  try {
    return JSON.parse(utf8.decode(buf));
  } catch {
    throw new BadRequestError('malformed JSON body');
  }
}

/**
 * The request body, stopping (413) as soon as it passes `limit` bytes. Events rather than
 * `for await`: a stream's async iterator sets up more per body than a small body's parse costs.
 */
function readLimited(incoming: IncomingMessage, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const fail = (err: unknown) => {
      incoming.off('data', onData);
      // A client that hangs up mid-upload is a disconnect, not a server failure.
      if (!(err instanceof MgptError) && (incoming.aborted || incoming.destroyed || (err as { code?: string }).code === 'ECONNRESET')) {
        reject(new CancelledError('the client closed the connection during the upload'));
      } else reject(err);
    };
    const onData = (part: Buffer) => {
      size += part.length;
      if (size > limit) {
        fail(new PayloadTooLargeError(`request body over ${limit} bytes`));
        return dropRest(incoming);
      }
      parts.push(part);
    };
    incoming.on('data', onData);
    incoming.once('end', () => resolve(parts.length === 1 ? parts[0] : Buffer.concat(parts, size)));
    incoming.once('error', fail);
    incoming.once('close', () => {
      if (!incoming.complete) fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    });
  });
}

/**
 * Stops reading a body over the limit as Node does when a `for await` over a server request ends
 * early: the request is detached from its socket, then destroyed, so what more arrives is dropped
 * while the socket stays open for the 413 (sent with Connection: close, then a lingering close).
 */
function dropRest(incoming: IncomingMessage): void {
  (incoming as { socket: unknown }).socket = null;
  incoming.destroy();
}
