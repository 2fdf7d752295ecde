import type { Server } from 'node:http';
import type { Socket } from 'node:net';

const LINGER_MS = 2_000;
const LINGER_BYTES = 16 * 1024 * 1024;

/**
 * A response with `Connection: close` sent before the request body was read (a 413) must not be
 * followed by a plain close: the unread bytes make the kernel send a reset, which can destroy the
 * answer before the client reads it. Instead: send FIN after the response, read and drop what the
 * client still sends (bounded in time and bytes), and close when it has finished.
 */
export function lingerOnClose(server: Server): void {
  server.on('connection', (socket: Socket) => {
    // node:http ends a Connection: close response with destroySoon() (FIN, then destroy at once).
    socket.destroySoon = function lingeringClose(this: Socket) {
      if (this.destroyed) return;
      let read = 0;
      const timer = setTimeout(() => this.destroy(), LINGER_MS);
      timer.unref();
      this.on('data', (d: Buffer) => {
        read += d.length;
        if (read > LINGER_BYTES) this.destroy();
      });
      // The client is done sending: close once our FIN has gone out too.
      this.once('end', () => (this.writableFinished ? this.destroy() : this.once('finish', () => this.destroy())));
      this.once('close', () => clearTimeout(timer));
      this.end();
      this.resume();
    };
  });
}
