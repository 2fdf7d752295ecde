import { Readable } from 'node:stream';
import { LocalBackend } from '../../src/backends/local.js';
import type { CliContext } from '../../src/cli/context.js';
import type { Engine } from '../../src/engine/engine.js';

export type TestContext = CliContext & { out: () => string; outBytes: () => Buffer; err: () => string };

/**
 * A command's context in-process (gh's iostreams.Test()): the local backend over `engine`, buffers
 * for stdout and stderr, and a TTY switch, so both the terminal and the piped paths are tested.
 */
export function testContext(engine: Engine, tty: boolean, stdin: string[] = []): TestContext {
  const out: Buffer[] = [];
  let err = '';
  const backend = new LocalBackend(engine);
  return {
    io: {
      stdout: { write: (c: string | Uint8Array) => (out.push(Buffer.from(c)), true) },
      stderr: { write: (c: string) => ((err += c), true) },
      stdin: Readable.from(stdin),
      stdoutIsTTY: tty,
      stderrIsTTY: tty,
      stdinIsTTY: stdin.length === 0,
    },
    env: {},
    version: 'test',
    flags: {},
    exitCode: 0,
    signal: new AbortController().signal,
    extendGrace: () => {},
    notice: (text: string) => {
      err += `mgpt: ${text}\n`;
    },
    settings: () => ({}) as never,
    engineOptions: () => ({}) as never,
    backend: async () => backend,
    admin: async () => backend.admin,
    close: async () => {},
    out: () => Buffer.concat(out).toString('utf8'),
    outBytes: () => Buffer.concat(out),
    err: () => err,
  } as TestContext;
}
