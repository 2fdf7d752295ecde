import { readFile } from 'node:fs/promises';
import { BadRequestError } from '../core/errors.js';
import { RECALL_MODES, type RecallMode } from '../core/text/recall-query.js';
import type { CliContext } from './context.js';
import { note } from './output.js';

/**
 * Reads a stream whole, but never more than `limit` bytes: past it, `tooLarge()` is thrown and
 * reading stops, so an endless source (`/dev/zero`, a pipe that never ends) cannot exhaust memory.
 */
export async function readBounded(stream: AsyncIterable<unknown>, limit: number, tooLarge: () => Error): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += b.length;
    if (size > limit) throw tooLarge();
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/** Why a file could not be read or written, in words (never a bare ENOENT). */
export function fileProblem(err: unknown, writing = false): string {
  if (err instanceof SyntaxError) return `not valid JSON (${err.message})`;
  switch ((err as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      return writing ? 'its directory does not exist' : 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    default:
      return (err as Error).message;
  }
}

/** Reads a JSON file an option names; a missing file or bad JSON is a usage error that says which. */
export async function readJsonFile(path: string, what: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new BadRequestError(`${what} ${path}: ${fileProblem(err)}`);
  }
}

/** Reads all of stdin as bytes. */
export async function readStdinBytes(ctx: CliContext): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

/** Reads all of stdin as UTF-8. */
export async function readStdin(ctx: CliContext): Promise<string> {
  return (await readStdinBytes(ctx)).toString('utf8');
}

/**
 * Text from an argument, a file (`-f`), or stdin (`-`, or implicitly when stdin is piped and no
 * argument was given). A single trailing newline from a file or pipe is dropped.
 */
export async function readTextInput(
  ctx: CliContext,
  what: string,
  arg: string | undefined,
  file: string | undefined,
): Promise<string> {
  if (arg !== undefined && file !== undefined) throw new BadRequestError(`give the ${what} either as an argument or with -f, not both`);
  let text: string;
  if (file !== undefined) {
    try {
      text = file === '-' ? await readStdin(ctx) : await readFile(file, 'utf8');
    } catch (err) {
      throw new BadRequestError(`cannot read ${file}: ${fileProblem(err)}`);
    }
  } else if (arg === '-' || (arg === undefined && !ctx.io.stdinIsTTY)) {
    text = await readStdin(ctx);
  } else if (arg !== undefined) {
    return arg;
  } else {
    throw new BadRequestError(`no ${what} given`, { hint: `pass it as an argument, with -f FILE, or - to read stdin` });
  }
  return text.replace(/\r?\n$/, '');
}

/**
 * A prompt as `llm` takes one: TEXT, with piped stdin placed before it as context
 * (`cat notes.md | mgpt ask "summarize"`); `-` or no TEXT reads stdin alone; `-f FILE` reads a file.
 * On a terminal, stdin is never read unless asked for with `-`.
 */
export async function readPromptInput(ctx: CliContext, what: string, arg: string | undefined, file: string | undefined): Promise<string> {
  if (arg === undefined || arg === '-' || file !== undefined || ctx.io.stdinIsTTY) return readTextInput(ctx, what, arg, file);
  const piped = await stdinIfReady(ctx);
  if (piped === undefined) {
    if (ctx.flags.verbose || ctx.io.stderrIsTTY) note(ctx, `stdin is an open pipe with nothing in it after ${STDIN_WAIT_MS} ms: not read (pass - to read it as the ${what})`);
    return arg;
  }
  const text = piped.replace(/\r?\n$/, '');
  return text.trim() ? `${text}\n\n${arg}` : arg;
}

/** How long TEXT waits for piped stdin to show data or end before going on without it. */
export const STDIN_WAIT_MS = 200;

/**
 * Piped stdin, read to its end if it shows data or ends within STDIN_WAIT_MS (a file, /dev/null,
 * `cat notes |`); undefined for a pipe its writer keeps open and silent (a parent process's, a CI
 * runner's), which would otherwise be waited on forever.
 */
async function stdinIfReady(ctx: CliContext): Promise<string | undefined> {
  const stdin = ctx.io.stdin as NodeJS.ReadableStream & { readableEnded?: boolean; destroy?: () => void };
  if (!stdin.readableEnded && !(await firstSign(stdin))) {
    stdin.destroy?.();
    return undefined;
  }
  return readStdin(ctx);
}

/** Whether the stream shows data, an end or an error within STDIN_WAIT_MS. */
function firstSign(stream: NodeJS.ReadableStream): Promise<boolean> {
  return new Promise((resolve) => {
    const settle = (ready: boolean) => {
      clearTimeout(timer);
      for (const e of ['readable', 'end', 'error']) stream.removeListener(e, yes);
      resolve(ready);
    };
    const yes = () => settle(true);
    const timer = setTimeout(() => settle(false), STDIN_WAIT_MS);
    for (const e of ['readable', 'end', 'error']) stream.once(e, yes);
  });
}

/** Parses a non-negative integer option; commander hands options over as strings. */
export function intOption(name: string, raw: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new BadRequestError(`${name} must be an integer ${range}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/** Parses a duration option (`500ms`, `10s`, `2m`; a bare number is seconds) into milliseconds. */
export function durationOption(name: string, raw: string | undefined, minMs = 1): number | undefined {
  if (raw === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(raw.trim());
  const ms = m ? Math.round(Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000 } as const)[(m[2] ?? 's') as 'ms' | 's' | 'm']) : NaN;
  if (!Number.isSafeInteger(ms) || ms < minMs) {
    throw new BadRequestError(`${name} must be a duration such as 500ms, 10s or 2m (at least ${minMs} ms), got ${JSON.stringify(raw)}`);
  }
  return ms;
}

/** `--since`: an age (`30m`, `24h`, `7d`, `2w`) or an ISO 8601 date or time; as an ISO time. */
export function sinceOption(raw: string | undefined, now = Date.now()): string | undefined {
  if (raw === undefined) return undefined;
  const age = /^(\d+)(m|h|d|w)$/.exec(raw.trim());
  if (age) return new Date(now - Number(age[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[age[2] as 'm' | 'h' | 'd' | 'w']).toISOString();
  const t = Date.parse(raw);
  if (Number.isNaN(t)) throw new BadRequestError(`--since must be an age (30m, 24h, 7d, 2w) or a date (2026-11-01), got ${JSON.stringify(raw)}`);
  return new Date(t).toISOString();
}

/**
 * `--recall [mode]`: a bare flag is `tool` (as before modes), `--no-recall` is `off`. A word that is
 * no mode is refused here, with the hint the engine's 400 cannot carry over HTTP; the engine checks
 * the mode again for every other caller.
 */
export function recallOption(raw: string | boolean | undefined): RecallMode | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'boolean') return raw ? 'tool' : 'off';
  if ((RECALL_MODES as readonly string[]).includes(raw)) return raw as RecallMode;
  throw new BadRequestError(`--recall must be auto, tool or off, got ${JSON.stringify(raw)}`, {
    hint: 'auto recalls earlier messages before each turn, tool lets the model search (a bare --recall), off neither; name the entity before the flag',
  });
}

/**
 * A count of tokens as a number. Only its syntax is checked here; the range is the engine's rule,
 * so both backends refuse a bad value with the same words.
 */
export function integerOption(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\s*-?\d+\s*$/.test(raw)) throw new BadRequestError(`${flag} must be an integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}
