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

/** Items mapped per step of mapInSlices: a few ms of work even when each item takes a UUID. */
const MAP_SLICE = 2_000;

/**
 * `items.map(f)`, a slice of MAP_SLICE items per step of the large-work lane: thousands of rows (a
 * branch's history) built in one piece held the thread for 40-90 ms.
 */
export async function mapInSlices<T, U>(items: readonly T[], f: (item: T, index: number) => U): Promise<U[]> {
  const out: U[] = [];
  for (let from = 0; from < items.length; from += MAP_SLICE) {
    const to = Math.min(items.length, from + MAP_SLICE);
    await largeWork.run(async () => {
      for (let i = from; i < to; i++) out.push(f(items[i], i));
    });
  }
  return out;
}
