import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The files each Task changed, as a table of their own (issue 21): written with the trace step that
 * records each change, and read by the deliverables of a Task, a session or a user without parsing the
 * trace's JSON. Filled here from the `file_op` steps already stored, oldest first, so the new `seq`s keep
 * the order of the changes and old Tasks keep their files.
 */
export class TaskFileChanges1765612800021 implements MigrationInterface {
  name = 'TaskFileChanges1765612800021';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    await queryRunner.query(`CREATE TABLE task_file_changes (
      seq ${postgres ? 'SERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
      task_id VARCHAR(36) NOT NULL REFERENCES tasks (id),
      session_id VARCHAR(36) NOT NULL,
      owner VARCHAR(320) NOT NULL,
      path TEXT NOT NULL,
      kind VARCHAR(16) NOT NULL,
      bytes INTEGER,
      changed_at VARCHAR(30) NOT NULL)`);
    // A user's or a session's newest changes (keyset by seq), whether a file changed again later, a Task's files.
    await queryRunner.query('CREATE INDEX idx_task_file_changes_owner ON task_file_changes (owner, seq)');
    await queryRunner.query('CREATE INDEX idx_task_file_changes_session ON task_file_changes (session_id, seq)');
    await queryRunner.query('CREATE INDEX idx_task_file_changes_path ON task_file_changes (session_id, path, seq)');
    await queryRunner.query('CREATE INDEX idx_task_file_changes_task ON task_file_changes (task_id, seq)');
    await queryRunner.query(postgres ? POSTGRES_BACKFILL : SQLITE_BACKFILL);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE task_file_changes');
  }
}

const columns = 'task_file_changes (task_id, session_id, owner, path, kind, bytes, changed_at)';

/*
 * The backfills follow the rule of `fileChangeOf` (src/agent/trace.repository.ts): an `ok` file_op step
 * whose detail names a path; `restored` when it undid another Task (`undoOf`), `created` when it says so,
 * else `modified`.
 */

const SQLITE_BACKFILL = `INSERT INTO ${columns}
  SELECT step.task_id, task.session_id, task.owner, json_extract(step.detail, '$.path'),
    CASE WHEN json_type(step.detail, '$.undoOf') IS NOT NULL THEN 'restored' WHEN json_type(step.detail, '$.created') = 'true' THEN 'created' ELSE 'modified' END,
    CASE WHEN json_type(step.detail, '$.bytes') = 'integer' THEN json_extract(step.detail, '$.bytes') END,
    step.started_at
  FROM task_steps step INNER JOIN tasks task ON task.id = step.task_id
  WHERE step.kind = 'file_op' AND step.outcome = 'ok' AND (CASE WHEN json_valid(step.detail) THEN json_type(step.detail, '$.path') END) = 'text'
  ORDER BY step.seq`;

// PostgreSQL's json refuses the escape \u0000, which steps written before NULs were replaced may hold
// (in their argument summary): it becomes \uFFFD (U+FFFD, what TraceRepository stores for a NUL now). Both escapes are a
// backslash and five characters, so the document stays valid JSON whatever precedes the match.
const POSTGRES_BACKFILL = `INSERT INTO ${columns}
  SELECT task_id, session_id, owner, doc ->> 'path',
    CASE WHEN doc -> 'undoOf' IS NOT NULL THEN 'restored' WHEN json_typeof(doc -> 'created') = 'boolean' AND doc ->> 'created' = 'true' THEN 'created' ELSE 'modified' END,
    CASE WHEN json_typeof(doc -> 'bytes') = 'number' AND doc ->> 'bytes' ~ '^[0-9]{1,9}$' THEN CAST(doc ->> 'bytes' AS INTEGER) END,
    started_at
  FROM (SELECT step.seq, step.task_id, task.session_id, task.owner, step.started_at, CAST(replace(step.detail, '\\u0000', '\\uFFFD') AS json) AS doc
        FROM task_steps step INNER JOIN tasks task ON task.id = step.task_id
        WHERE step.kind = 'file_op' AND step.outcome = 'ok') source
  WHERE json_typeof(doc -> 'path') = 'string'
  ORDER BY seq`;
