import { CommanderError } from 'commander';
import { formatUsd } from '../core/text/numbers.js';
import { type ExitCode, MgptError, PaymentRequiredError, exitCodeOf, fromOtherBundle, fromSystemError } from '../core/errors.js';
import { type CliContext, createContext, type ContextOptions } from './context.js';
import { colorWanted, colors, loadColors, sanitizeForTerminal } from './output.js';
import { buildProgram, versionAlias } from './program.js';
import { splitJsonFields } from './json-flags.js';

/** Runs one command line and returns its exit code; prints `error: ...` lines, never exits. */
export async function runCli(argv: string[], opts: ContextOptions): Promise<number> {
  const ctx = createContext(opts);
  try {
    if (colorWanted(opts.io, opts.env)) await loadColors();
    const args = splitJsonFields(versionAlias(argv));
    await (await buildProgram(ctx, args)).parseAsync(args, { from: 'user' });
    return ctx.exitCode;
  } catch (err) {
    return report(ctx, err);
  } finally {
    await ctx.close();
  }
}

function report(ctx: CliContext, thrown: unknown): ExitCode {
  const err = fromSystemError(fromOtherBundle(thrown));
  if (err instanceof CommanderError) {
    // Commander already printed its message; help and --version end normally.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return 0;
    return 2;
  }
  const c = colors(ctx, 'stderr');
  // Messages can quote stored values (names, archive entries).
  const message = sanitizeForTerminal(err instanceof Error ? err.message : String(err));
  ctx.io.stderr.write(`${c.red('error:')} ${message}\n`);
  // mgpt's 402 says the balance, the cost and what is missing in its message; another server's gets them here.
  if (err instanceof PaymentRequiredError && !err.detailed) {
    const d = err.details;
    ctx.io.stderr.write(`balance ${formatUsd(d.balanceUsd)}, this request ${formatUsd(d.billedUsd)}, missing ${formatUsd(d.missingUsd)}\n`);
  }
  if (err instanceof MgptError && err.hint) ctx.io.stderr.write(c.dim(`hint: ${sanitizeForTerminal(err.hint)}`) + '\n');
  if (ctx.flags.verbose && err instanceof Error && !(err instanceof MgptError) && err.stack) {
    ctx.io.stderr.write(c.dim(err.stack) + '\n');
  }
  return exitCodeOf(err);
}
