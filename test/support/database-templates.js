// Jest global setup (plain JS: it runs outside the transform). Migrates one template database per kind, once a
// run, with the build's own migrations (build/database/data-source-options.js), and names them for the workers:
// writeConfig (test/support/databases.ts) gives each e2e service a copy, so that the ~250 services of a run start
// on a migrated schema instead of each migrating an empty database (a PostgreSQL one takes hundreds of
// milliseconds of DDL). The migrations themselves stay under test: the medium tests run them on empty databases
// (freshDatabase), and the e2e files that start from an empty database (startup, first-run-quickstart, replicas on
// PostgreSQL, ...) have the service migrate it at boot. Without a build (a unit or medium file run alone) or a
// PostgreSQL server, that kind has no template and writeConfig makes an empty database as before.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';

const ROOT = resolve(import.meta.dirname, '../..');
const SQLITE_KEY = 'OAM_TEST_SQLITE_TEMPLATE';
const POSTGRES_KEY = 'OAM_TEST_POSTGRES_TEMPLATE';
const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';

async function migrate(dataSourceOptions, database) {
  const { DataSource } = await import('typeorm');
  const source = new DataSource(dataSourceOptions(database));
  await source.initialize();
  await source.destroy();
}

export async function prepareTemplates() {
  const options = join(ROOT, 'build/database/data-source-options.js');
  if (!existsSync(options)) return;
  const { dataSourceOptions } = await import(pathToFileURL(options).href);
  const path = join(mkdtempSync(join(tmpdir(), 'oam-template-')), 'agent.sqlite');
  await migrate(dataSourceOptions, { type: 'sqlite', path });
  process.env[SQLITE_KEY] = path;
  // Named like every test database of this run (oam_p<pid>_…), so that a concurrent run's clean-up leaves it alone
  // and this run's teardown drops it (drop-test-databases.js).
  const name = `oam_p${process.pid}_template`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await migrate(dataSourceOptions, { type: 'postgres', url: `postgres://postgres@127.0.0.1:5432/${name}` });
    process.env[POSTGRES_KEY] = name;
  } catch (error) {
    process.stderr.write(`no PostgreSQL template database: ${error.message}\n`);
  } finally {
    await admin.end().catch(() => undefined);
  }
}

export function removeTemplates() {
  const path = process.env[SQLITE_KEY];
  if (path?.startsWith(join(tmpdir(), 'oam-template-'))) rmSync(dirname(path), { recursive: true, force: true });
}
