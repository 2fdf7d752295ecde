import { render } from 'ink';
import { ChatApp } from './chat-app.js';
import { ChatController, type ChatOptions } from './chat-controller.js';

export interface RunChatOptions extends ChatOptions {
  history?: string[];
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  /** Aborted on SIGTERM, SIGHUP or SIGINT from outside: the REPL cancels its turn and leaves. */
  signal?: AbortSignal;
  /** Given how the REPL shows a notice, while it owns the terminal. */
  showNotices?: (show: (text: string) => void) => void;
}

/**
 * Renders the REPL until the person leaves; resolves with the input history to keep. Ctrl-C is
 * the app's (it cancels a reply), so ink must not exit on it.
 */
export async function runChat(opts: RunChatOptions): Promise<string[]> {
  const controller = new ChatController(opts);
  opts.showNotices?.((text) => controller.notice(text));
  let kept = opts.history ?? [];
  const app = render(<ChatApp controller={controller} history={opts.history} onExit={(h) => (kept = h)} />, {
    exitOnCtrlC: false,
    // Given only when set: an explicit undefined would replace ink's process defaults.
    ...(opts.stdin ? { stdin: opts.stdin } : {}),
    ...(opts.stdout ? { stdout: opts.stdout } : {}),
  });
  const leave = () => controller.exit();
  opts.signal?.addEventListener('abort', leave, { once: true });
  try {
    await controller.start();
    if (opts.signal?.aborted) controller.exit();
    await app.waitUntilExit();
    // A cancelled turn frees its lease as it unwinds: let it, before the database is closed.
    await controller.settled();
  } finally {
    opts.signal?.removeEventListener('abort', leave);
  }
  return kept;
}
