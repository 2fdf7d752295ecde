/** Lets the event loop run (timers, sockets, other requests) before the caller goes on. */
export function nextMacrotask(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * Runs large synchronous steps (a branch's thousands of rows written in one transaction) one at
 * a time, each after a turn of the event loop: however many arrive together, the thread is never
 * held by more than one of them between two turns, so other requests keep being answered.
 */
export class Lane {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(step: () => Promise<T>): Promise<T> {
    const result = this.tail.then(nextMacrotask).then(step);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

/**
 * The process's lane for large synchronous work: one event loop per process, so one lane. Request
 * bodies of hundreds of kilobytes are parsed in it and a branch's history is written in it.
 */
export const largeWork = new Lane();
