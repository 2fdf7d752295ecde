/**
 * Resolves once everything written to `stream` so far has been handed to the OS. A pipe's writes
 * are asynchronous in Node: what the reader has not taken yet (past the pipe's 64 KiB) waits in
 * the stream's queue, and process.exit drops that queue, so the process must wait for it first.
 * A write queued after the earlier ones calls back only when they are done.
 */
export function flushed(stream: NodeJS.WritableStream & { writableLength?: number; destroyed?: boolean; writableEnded?: boolean }): Promise<void> {
  if (stream.destroyed || stream.writableEnded || !stream.writableLength) return Promise.resolve();
  return new Promise((resolve) => {
    stream.write('', () => resolve());
  });
}
