import type { DataSource } from 'typeorm';

/**
 * Database time as ISO-8601 UTC text (the format every stored time uses), so that leases compare
 * correctly across replicas whatever their own clocks say.
 */
export interface SqlClock {
  now: () => string;
  nowPlus: (ms: number) => string;
}

export function sqlClock(dataSource: DataSource): SqlClock {
  if (dataSource.options.type === 'postgres') {
    const iso = (expression: string) => `to_char((${expression}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    return {
      now: () => iso('clock_timestamp()'),
      nowPlus: (ms) => iso(`clock_timestamp() + interval '${Math.trunc(ms)} milliseconds'`),
    };
  }
  return {
    now: () => `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
    nowPlus: (ms) => `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+${(Math.trunc(ms) / 1000).toFixed(3)} seconds')`,
  };
}
