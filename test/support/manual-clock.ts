import { Clock } from '../../src/common/clock.js';
import type { SqlClock } from '../../src/database/sql-clock.js';

/** A clock that moves only when the test says so. */
export class ManualClock extends Clock {
  constructor(private at = Date.parse('2026-12-01T09:00:00.000Z')) {
    super();
  }

  now(): number {
    return this.at;
  }

  advance(ms: number): void {
    this.at += ms;
  }
}

/** Database time read from `clock`: the SQL literals sql-clock.ts's expressions would evaluate to at that time. */
export function manualSqlClock(clock: Clock): SqlClock {
  const literal = (ms: number) => `'${new Date(ms).toISOString()}'`;
  return { now: () => literal(clock.now()), nowPlus: (ms) => literal(clock.now() + Math.trunc(ms)) };
}
