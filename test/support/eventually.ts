/**
 * Reads `read()` every `everyMs` until `done(value)` holds and returns that value: a wait for something a test
 * can observe (a row, a received request, a status), with a deadline instead of a fixed sleep. Past
 * `timeoutMs` it throws, naming `what` and the last value read.
 */
export async function eventually<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = 10_000, everyMs = 25, what = 'condition' }: { timeoutMs?: number; everyMs?: number; what?: string } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
