import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The PostgreSQL server the tests use (.ci/run starts it): 127.0.0.1:5432, trust auth, database `test`. */
export const POSTGRES_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';

export type DatabaseKind = 'sqlite' | 'postgres';

/** Which database the e2e suites run against: OAM_TEST_DB=postgres selects PostgreSQL. */
export const E2E_DATABASE: DatabaseKind = process.env.OAM_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

/** A fresh, empty database of the given kind, as the `database` section of agent.yaml. */
export async function freshDatabase(kind: DatabaseKind, dir = mkdtempSync(join(tmpdir(), 'oam-db-'))) {
  if (kind === 'sqlite') return { type: 'sqlite', path: join(dir, 'agent.sqlite') };
  // Named after this process so that a concurrent test run's clean-up leaves it alone (drop-test-databases.js).
  const name = `oam_p${process.pid}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return { type: 'postgres', url: `postgres://postgres@127.0.0.1:5432/${name}` };
}
