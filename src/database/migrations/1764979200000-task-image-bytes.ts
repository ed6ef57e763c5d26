import type { MigrationInterface, QueryRunner } from 'typeorm';

const COLUMNS = 'task_id, position, mime_type, bytes, sha256';
/** Images converted per statement on SQLite, so a large table never sits in memory at once. */
const BATCH = 16;

/**
 * Image bytes instead of their Base64 text: a quarter less to write on the accept path (a 20 MiB
 * request wrote 27 MiB), bound to the statement without a copy, and no decoding before each run.
 * PostgreSQL converts in SQL; SQLite has no Base64 function, so its rows are converted here, in
 * batches, into a rebuilt table (the only way to give an SQLite table a new NOT NULL column).
 */
export class TaskImageBytes1764979200000 implements MigrationInterface {
  name = 'TaskImageBytes1764979200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'postgres') {
      await queryRunner.query(`ALTER TABLE task_images ADD COLUMN data BYTEA`);
      await queryRunner.query(`UPDATE task_images SET data = decode(data_base64, 'base64')`);
      await queryRunner.query(`ALTER TABLE task_images ALTER COLUMN data SET NOT NULL`);
      await queryRunner.query(`ALTER TABLE task_images DROP COLUMN data_base64`);
      return;
    }
    await rebuildSqlite(queryRunner, 'data BLOB NOT NULL', 'data_base64', (text) => Buffer.from(text as string, 'base64'));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'postgres') {
      await queryRunner.query(`ALTER TABLE task_images ADD COLUMN data_base64 TEXT`);
      // encode() breaks its output into lines of 76 characters; the column held one unbroken string.
      await queryRunner.query(`UPDATE task_images SET data_base64 = replace(encode(data, 'base64'), E'\\n', '')`);
      await queryRunner.query(`ALTER TABLE task_images ALTER COLUMN data_base64 SET NOT NULL`);
      await queryRunner.query(`ALTER TABLE task_images DROP COLUMN data`);
      return;
    }
    await rebuildSqlite(queryRunner, 'data_base64 TEXT NOT NULL', 'data', (bytes) => (bytes as Buffer).toString('base64'));
  }
}

/** Recreates task_images with `newColumn` as its last column, filled from `oldColumn` through `convert`. */
async function rebuildSqlite(queryRunner: QueryRunner, newColumn: string, oldColumn: string, convert: (value: unknown) => unknown): Promise<void> {
  await queryRunner.query(`CREATE TABLE task_images_next (
      task_id VARCHAR(36) NOT NULL REFERENCES tasks (id),
      position INTEGER NOT NULL,
      mime_type VARCHAR(32) NOT NULL,
      bytes INTEGER NOT NULL,
      sha256 VARCHAR(64) NOT NULL,
      ${newColumn},
      PRIMARY KEY (task_id, position))`);
  const placeholders = '?, ?, ?, ?, ?, ?';
  for (let after = 0; ;) {
    const rows = (await queryRunner.query(`SELECT rowid AS id, ${COLUMNS}, ${oldColumn} AS value FROM task_images WHERE rowid > ? ORDER BY rowid LIMIT ${BATCH}`, [
      after,
    ])) as Record<string, unknown>[];
    if (rows.length === 0) break;
    for (const row of rows) {
      await queryRunner.query(`INSERT INTO task_images_next VALUES (${placeholders})`, [row.task_id, row.position, row.mime_type, row.bytes, row.sha256, convert(row.value)]);
    }
    after = Number(rows.at(-1)!.id);
  }
  await queryRunner.query(`DROP TABLE task_images`);
  await queryRunner.query(`ALTER TABLE task_images_next RENAME TO task_images`);
}
