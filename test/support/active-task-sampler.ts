import pg from 'pg';
import type { DatabaseTarget } from './database-probe.js';

/**
 * Counts the active (planning or running) Tasks of a PostgreSQL database every 10 ms on its own connection,
 * from now until `stop()`, which resolves with the highest count seen: replicas' "one active Task" (T5.2).
 */
export function startActiveTaskSampler(database: DatabaseTarget) {
  const client = new pg.Client({ connectionString: (database as { url: string }).url });
  let max = 0;
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM tasks WHERE status IN ('planning', 'running')");
      max = Math.max(max, rows[0].n);
      await new Promise((done) => setTimeout(done, 10));
    }
    await client.end();
  })();
  return { stop: async () => ((running = false), await loop, max) };
}
