import { runCli } from './run.js';

declare const MGPT_VERSION: string;

/** The bundle's entry: real process io, Ctrl-C wired to cancellation. The only place that exits. */
const controller = new AbortController();
let interrupted = false;
process.on('SIGINT', () => {
  // Ctrl-C cancels what is in flight (a turn leaves no trace, an export removes its partial
  // file) and the command ends on its own; a command with nothing to cancel is ended shortly
  // after, and a second Ctrl-C leaves at once.
  if (interrupted) process.exit(130);
  interrupted = true;
  controller.abort();
  setTimeout(() => process.exit(130), 1000).unref();
});
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  // `mgpt history x | head` closes the pipe early: not an error.
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

void runCli(process.argv.slice(2), {
  io: {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
    stdinIsTTY: Boolean(process.stdin.isTTY),
  },
  env: process.env,
  version: typeof MGPT_VERSION === 'string' ? MGPT_VERSION : '0.0.0-dev',
  signal: controller.signal,
}).then((code) => process.exit(interrupted && code !== 0 ? 130 : code));
