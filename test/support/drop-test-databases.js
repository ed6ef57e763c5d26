// Jest global setup/teardown (plain JS: it runs outside the transform). Drops the oam_* databases
// that tests create on the local PostgreSQL server; a server that is down is reported, not fatal.
import pg from 'pg';

export default async function dropTestDatabases() {
  const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
  try {
    await client.connect();
    const { rows } = await client.query("SELECT datname FROM pg_database WHERE datname LIKE 'oam\\_%'");
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  } catch (error) {
    process.stderr.write(`test databases not dropped: ${error.message}\n`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
