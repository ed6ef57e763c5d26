// Jest global setup/teardown (plain JS: it runs outside the transform). Drops the oam_* databases
// that tests create on the local PostgreSQL server; a server that is down is reported, not fatal.
// A database is named oam_p<pid>_<random> after the Jest process that made it (test/support/databases.ts),
// so that several test runs can share one server: each run drops its own databases and those of runs
// whose process is gone, never those of a run still going.
import pg from 'pg';

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function ownerPid(datname) {
  const match = /^oam_p(\d+)_/.exec(datname);
  return match ? Number(match[1]) : undefined;
}

export default async function dropTestDatabases() {
  const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/test' });
  try {
    await client.connect();
    const { rows } = await client.query("SELECT datname FROM pg_database WHERE datname LIKE 'oam\\_%'");
    for (const { datname } of rows) {
      const pid = ownerPid(datname);
      if (pid !== undefined && pid !== process.pid && isAlive(pid)) continue;
      await client.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  } catch (error) {
    process.stderr.write(`test databases not dropped: ${error.message}\n`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
