import type { CronSpec } from '../config/cron-spec.js';

/** Fires one look at a due schedule may start at most (a six-field cron after a stall of the event loop). */
const MAX_FIRES_PER_LOOK = 10;

/**
 * Which fires of a due schedule to start now, and when it is next due. Fires up to `graceMs` late are
 * on time (the tick, a busy replica); older ones were missed while no replica ran and are not replayed,
 * except that `catch_up: last` starts the latest of them once when nothing is on time.
 */
export function firePlan(spec: CronSpec, dueAt: Date, now: Date, graceMs: number, catchUp: 'none' | 'last'): { fires: Date[]; next: Date | null } {
  const onTimeFrom = new Date(now.getTime() - graceMs);
  const fires: Date[] = [];
  for (let at = dueAt >= onTimeFrom ? dueAt : spec.next(new Date(onTimeFrom.getTime() - 1)); at && at <= now && fires.length < MAX_FIRES_PER_LOOK; at = spec.next(at)) {
    fires.push(at);
  }
  if (fires.length === 0 && dueAt < onTimeFrom && catchUp === 'last') {
    const latest = spec.latestBefore(onTimeFrom);
    if (latest) fires.push(latest);
  }
  return { fires, next: spec.next(now) };
}
