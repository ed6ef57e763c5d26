/** The window a trigger's rate counts deliveries in. */
const WINDOW_MS = 60_000;

/** A trigger took `triggers.rate_per_minute` deliveries in the last minute: the delivery is refused (429). */
export class TriggerRateExceeded extends Error {
  constructor(
    /** Seconds until the oldest delivery of the window leaves it (Retry-After). */
    readonly retryAfter: number,
  ) {
    super('too many deliveries for this trigger');
  }
}

/** What the database holds of a trigger's last minute: its deliveries then, and when the oldest came. */
export interface RateWindow {
  count: number;
  oldest: string | null;
}

/**
 * A trigger's rate, counted in the database over its runs (ADR 0039), so the limit holds across
 * replicas: at most `perMinute` deliveries in any sliding minute. The window starts here.
 */
export const rateWindowStart = (now: number): string => new Date(now - WINDOW_MS).toISOString();

/** 0 when one more delivery fits the window; else the seconds until one does (at least 1). */
export function rateWait(window: RateWindow, perMinute: number, now: number): number {
  if (window.count < perMinute || window.oldest === null) return 0;
  return Math.max(1, Math.ceil((Date.parse(window.oldest) + WINDOW_MS - now) / 1000));
}
