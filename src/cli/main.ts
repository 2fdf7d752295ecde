import { runCli } from './run.js';
import { flushed } from './flushed.js';
import { watchSignals } from './signals.js';

declare const MGPT_VERSION: string;

/** The bundle's entry: real process io, signals wired to cancellation. The only place that exits. */
const signals = watchSignals((code) => process.exit(code));
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
    columns: process.stdout.isTTY ? process.stdout.columns : undefined,
  },
  env: process.env,
  version: typeof MGPT_VERSION === 'string' ? MGPT_VERSION : '0.0.0-dev',
  signal: signals.signal,
  extendGrace: signals.extendGrace,
}).then(async (code) => {
  // A command a signal cut short exits 128 + the signal; one that finished cleanly (serve after draining) exits 0.
  const signalled = signals.received();
  // Exiting drops output a slow pipe has not taken yet; a signal's grace timer still ends a stalled wait.
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(signalled !== undefined && code !== 0 ? signalled : code);
});
