/** The signals that end a command, and the exit code each gives (128 + its number). */
export const EXIT_SIGNALS = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/** How long a command has to wind down after a signal before the process is ended anyway. */
export const DEFAULT_GRACE_MS = 1000;

export interface SignalWatch {
  /** Aborted on the first signal: what is in flight is cancelled (a turn frees its lease, stores nothing). */
  readonly signal: AbortSignal;
  /** The exit code of the signal received, if one was. */
  received(): number | undefined;
  /** Gives a command that drains (serve) this long, instead of the default, after a signal. */
  extendGrace(ms: number): void;
}

/**
 * One place for SIGINT, SIGTERM and SIGHUP: the first cancels what is in flight and lets the
 * command end on its own (cleanup runs: leases are released, partial files removed), ending the
 * process after a grace period if it has not; a second signal ends it at once.
 */
export function watchSignals(exit: (code: number) => void): SignalWatch {
  const controller = new AbortController();
  let code: number | undefined;
  let graceMs = DEFAULT_GRACE_MS;
  for (const [name, exitCode] of Object.entries(EXIT_SIGNALS)) {
    process.on(name, () => {
      if (code !== undefined) return exit(code);
      code = exitCode;
      controller.abort();
      setTimeout(() => exit(exitCode), graceMs).unref();
    });
  }
  return {
    signal: controller.signal,
    received: () => code,
    extendGrace(ms) {
      graceMs = Math.max(graceMs, ms);
    },
  };
}
