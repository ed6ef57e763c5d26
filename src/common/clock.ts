/**
 * The time, as something a service is given rather than reads: leases, retention cut-offs and the audit's
 * timestamps take a Clock, so that a test moves a clock (test/support/manual-clock.ts) instead of waiting.
 * CoreModule provides the system clock. (Database time, which leases compare across replicas, is SqlClock's.)
 */
export abstract class Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  abstract now(): number;
}

class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }
}

export const SYSTEM_CLOCK: Clock = new SystemClock();

/** ISO-8601 UTC timestamps with millisecond precision, the format every stored time uses. */
export const nowIso = (clock: Clock = SYSTEM_CLOCK) => new Date(clock.now()).toISOString();
