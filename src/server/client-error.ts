import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { errorBodyFor, requestIdFrom } from './request-id.js';

/**
 * node:http's own refusals (a request it cannot parse, headers over the limit, a client too slow)
 * answered like the app's: a JSON body in the route family's shape and an X-Request-Id, then close.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
    // A response already under way (or a connection already gone) cannot be answered.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, reason, message] = describe(err.code);
    const body = JSON.stringify(errorBodyFor(requestPath(err.rawPacket), message));
    const head = [
      `HTTP/1.1 ${status} ${reason}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestIdFrom(undefined).id}`,
      'Connection: close',
    ].join('\r\n');
    socket.end(`${head}\r\n\r\n${body}`);
  });
}

function describe(code: string | undefined): [number, string, string] {
  if (code === 'HPE_HEADER_OVERFLOW') return [431, 'Request Header Fields Too Large', 'request headers too large'];
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'Request Timeout', 'request timeout: the request was sent too slowly'];
  return [400, 'Bad Request', 'malformed HTTP request'];
}

/** The path from the request line at the start of the bytes that failed, when they hold one. */
function requestPath(packet: Buffer | undefined): string | undefined {
  const line = packet?.subarray(0, 2048).toString('latin1').split('\r\n', 1)[0];
  return line?.match(/^[A-Z]+ (\/\S*) HTTP\/1\.[01]$/)?.[1];
}
