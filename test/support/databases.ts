import { randomBytes } from 'node:crypto';
import { chownSync, copyFileSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The PostgreSQL server the tests use (.ci/run starts it): 127.0.0.1:5432, trust auth, database `test`. */
export const POSTGRES_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';

export type DatabaseKind = 'sqlite' | 'postgres';

/** Which database the e2e suites run against: OAM_TEST_DB=postgres selects PostgreSQL. */
export const E2E_DATABASE: DatabaseKind = process.env.OAM_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

/** A fresh, empty database of the given kind, as the `database` section of agent.yaml. */
export function freshDatabase(kind: DatabaseKind, dir = mkdtempSync(join(tmpdir(), 'oam-db-'))) {
  return kind === 'sqlite' ? Promise.resolve({ type: 'sqlite', path: join(dir, 'agent.sqlite') }) : createPostgres();
}

/**
 * A fresh database of the given kind with every migration applied: a copy of this run's template
 * (test/support/database-templates.js), or an empty one where the run has none, which the service then migrates.
 */
export async function migratedDatabase(kind: DatabaseKind, dir = mkdtempSync(join(tmpdir(), 'oam-db-'))) {
  const template = process.env[kind === 'sqlite' ? 'OAM_TEST_SQLITE_TEMPLATE' : 'OAM_TEST_POSTGRES_TEMPLATE'];
  if (!template) return freshDatabase(kind, dir);
  if (kind === 'postgres') return createPostgres(template);
  const path = join(dir, 'agent.sqlite');
  copyFileSync(template, path);
  // Owned like the file the service would have made there: startup.e2e's unprivileged services get a folder of their own.
  const owner = statSync(dir);
  if (owner.uid !== process.getuid?.()) chownSync(path, owner.uid, owner.gid);
  return { type: 'sqlite', path };
}

async function createPostgres(template?: string) {
  // Named after this process so that a concurrent test run's clean-up leaves it alone (drop-test-databases.js).
  const name = `oam_p${process.pid}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  return { type: 'postgres', url: `postgres://postgres@127.0.0.1:5432/${name}` };
}
