/** `rest` with an already-read result in front; stopping early also stops `rest`. */
export async function* prepend<T>(first: IteratorResult<T>, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    if (first.done) return;
    yield first.value;
    yield* rest;
  } finally {
    await rest.return(undefined);
  }
}

/**
 * Runs a stream to its first event, so a failure before any output (404, 402, 409, a provider
 * refusal) is thrown here and can still choose the HTTP status; the rest is replayed after it.
 */
export async function primed<T>(it: AsyncGenerator<T>): Promise<AsyncGenerator<T>> {
  return prepend(await it.next(), it);
}
