import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorBodyFor, requestIdFrom } from './request-id.js';

/**
 * node:http's own refusals (a request it cannot parse, headers over the limit, a client too slow)
 * answered like the app's: a JSON body in the route family's shape and an X-Request-Id, then close.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    // A response already under way (or a connection already gone) cannot be answered.
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, reason, message] = describe(err.code);
    // What is known of the request: parsed (a timeout in the body) or the raw bytes that failed.
    const head = err.rawPacket?.subarray(0, 8192).toString('latin1') ?? '';
    const path = inFlight?.req?.url ?? requestPath(head);
    const callerId = inFlight?.req?.headers['x-request-id'] ?? head.match(/\r\nx-request-id:[ \t]*([^\r\n]*?)[ \t]*\r\n/i)?.[1];
    const body = JSON.stringify(errorBodyFor(path, message));
    const answer = [
      `HTTP/1.1 ${status} ${reason}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestIdFrom(typeof callerId === 'string' ? callerId : undefined).id}`,
      'Connection: close',
    ].join('\r\n');
    socket.write(`${answer}\r\n\r\n${body}`);
    // FIN after the answer; lingering-close.ts drains what the client still sends so no reset eats it.
    socket.destroySoon();
  });
}

function describe(code: string | undefined): [number, string, string] {
  if (code === 'HPE_HEADER_OVERFLOW') return [431, 'Request Header Fields Too Large', 'request headers too large'];
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'Request Timeout', 'request timeout: the request was sent too slowly'];
  return [400, 'Bad Request', 'malformed HTTP request'];
}

/** The path from the request line at the start of the bytes that failed, when they hold one. */
function requestPath(head: string): string | undefined {
  return head.split('\r\n', 1)[0].match(/^[A-Z]+ (\/\S*) HTTP\/1\.[01]$/)?.[1];
}
