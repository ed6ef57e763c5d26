/** Triggers whose buckets one process keeps at most (the least recently used go first). */
const MAX_BUCKETS = 10_000;

/**
 * A token bucket per trigger in this process: `perMinute` deliveries a minute, refilled evenly, a burst
 * of at most `perMinute`. Each replica keeps its own, so the limit across replicas is a multiple of it.
 */
export class TriggerRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** 0 when the delivery may go ahead (a token is taken); else the seconds until one is free (Retry-After). */
  take(triggerId: string): number {
    const now = this.now();
    const bucket = this.buckets.get(triggerId) ?? { tokens: this.perMinute, at: now };
    this.buckets.delete(triggerId);
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000);
    bucket.at = now;
    this.buckets.set(triggerId, bucket);
    if (this.buckets.size > MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil(((1 - bucket.tokens) * 60_000) / this.perMinute / 1000));
  }
}
