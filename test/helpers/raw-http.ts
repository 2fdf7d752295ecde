import { connect } from 'node:net';
import { type spawnMgpt, firstOutput } from './cli.js';

/** What came back on a raw connection: the status line's code (NaN when none), and all bytes as latin1. */
export interface RawReply {
  status: number;
  text: string;
}

/**
 * Writes `request` as is on a fresh connection to `url` (fetch would normalize a malformed path;
 * this sends the bytes) and reads until the server closes it. Send `Connection: close`. The socket
 * is not ended first: node:http drops a request whose client half-closed before it was answered.
 */
export function rawRequest(url: string, request: string | Buffer): Promise<RawReply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const s = connect(Number(port), hostname, () => s.write(request));
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    // A reset after the answer (the server closing on unread bytes) still leaves the answer read.
    s.on('error', () => {});
    s.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? NaN), text });
    });
  });
}

/** The URL a spawned `mgpt serve --port 0` prints on stdout once it listens. */
export async function servedUrl(server: ReturnType<typeof spawnMgpt>): Promise<string> {
  let out = '';
  server.stdout!.on('data', (d) => (out += d));
  await firstOutput(server);
  // The URL is one line; wait for its end if the first chunk was partial.
  while (!out.includes('\n')) await new Promise((r) => server.stdout!.once('data', r));
  return out.split('\n')[0].trim();
}
