import type { ChatImportProgressHandler, ChatImportResult } from '../../core/wire/chat-import.js';
import { MgptError } from '../../core/errors.js';

/** Lines the stream holds before the import waits for its reader: a slow client holds the import back, not the server's memory. */
const HIGH_WATER_LINES = 256;

/**
 * An import as NDJSON: `{"object":"import.conversation", ...}` for each conversation as it is
 * done, then the report (`{"object":"import", ...}`, as the JSON answer would be). Resolves once
 * the first line is ready, so an export refused before its first conversation (400, 413) is still
 * an HTTP error; a failure after that is the last line, `{"object":"error", "error", "code",
 * "status", "hint"}`. `done` runs when the import has ended, however.
 */
export async function ndjsonLines(
  run: (onProgress: ChatImportProgressHandler) => Promise<ChatImportResult>,
  done: () => Promise<void>,
  onUnexpectedError?: (err: unknown) => void,
): Promise<ReadableStream<Uint8Array>> {
  const enc = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let wake: (() => void) | undefined;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      pull: () => wakeUp(),
      // The client went away: lines are dropped; the request's signal stops the import.
      cancel: () => void ((cancelled = true), wakeUp()),
    },
    { highWaterMark: HIGH_WATER_LINES },
  );
  const wakeUp = () => {
    wake?.();
    wake = undefined;
  };
  let began = false;
  let first!: { resolve: () => void; reject: (err: unknown) => void };
  const started = new Promise<void>((resolve, reject) => (first = { resolve, reject }));
  const push = async (line: unknown) => {
    if (cancelled) return;
    controller.enqueue(enc.encode(JSON.stringify(line) + '\n'));
    if (!began) (began = true), first.resolve();
    if ((controller.desiredSize ?? 1) <= 0) await new Promise<void>((r) => (wake = r));
  };
  void run((p) => (p.last ? push({ object: 'import.conversation', ...p.last }) : undefined))
    .then(async (report) => {
      await push(report);
      if (!cancelled) controller.close();
    })
    .catch((err) => {
      if (!began) return first.reject(err);
      if (!(err instanceof MgptError)) onUnexpectedError?.(err);
      if (!cancelled) controller.enqueue(enc.encode(JSON.stringify(errorLine(err)) + '\n')), controller.close();
    })
    .finally(done);
  await started;
  return stream;
}

function errorLine(err: unknown): Record<string, unknown> {
  if (!(err instanceof MgptError)) return { object: 'error', error: 'internal error', code: 'internal', status: 500 };
  return { object: 'error', error: err.message, code: err.code, status: err.status, ...(err.hint ? { hint: err.hint } : {}) };
}
