import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Initial schema. The one-active-Task rule is a partial unique index: at most one row may be
 * `planning` or `running`, so a second claimer fails in the database itself, across processes.
 */
export class InitialSchema1764633600000 implements MigrationInterface {
  name = 'InitialSchema1764633600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const postgres = queryRunner.connection.options.type === 'postgres';
    const serial = postgres ? 'SERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT';
    await queryRunner.query(`CREATE TABLE sessions (
      id VARCHAR(36) PRIMARY KEY,
      owner VARCHAR(320) NOT NULL,
      created_at VARCHAR(30) NOT NULL)`);
    await queryRunner.query(`CREATE INDEX idx_sessions_owner ON sessions (owner)`);
    await queryRunner.query(`CREATE TABLE tasks (
      seq ${serial},
      id VARCHAR(36) NOT NULL UNIQUE,
      session_id VARCHAR(36) NOT NULL REFERENCES sessions (id),
      owner VARCHAR(320) NOT NULL,
      request TEXT NOT NULL,
      temperature DOUBLE PRECISION,
      status VARCHAR(16) NOT NULL CHECK (status IN ('queued','planning','running','completed','failed','cancelled')),
      completed_subtasks INTEGER NOT NULL DEFAULT 0,
      total_subtasks INTEGER NOT NULL DEFAULT 1,
      current_task VARCHAR(200) NOT NULL DEFAULT '',
      input_tokens INTEGER NOT NULL DEFAULT 0,
      output_tokens INTEGER NOT NULL DEFAULT 0,
      critical_path_tokens INTEGER NOT NULL DEFAULT 0,
      result TEXT,
      cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
      created_at VARCHAR(30) NOT NULL,
      updated_at VARCHAR(30) NOT NULL,
      started_at VARCHAR(30),
      finished_at VARCHAR(30))`);
    await queryRunner.query(`CREATE UNIQUE INDEX idx_tasks_one_active ON tasks ((1)) WHERE status IN ('planning','running')`);
    await queryRunner.query(`CREATE INDEX idx_tasks_status_seq ON tasks (status, seq)`);
    await queryRunner.query(`CREATE INDEX idx_tasks_session ON tasks (session_id, seq)`);
    await queryRunner.query(`CREATE TABLE task_images (
      task_id VARCHAR(36) NOT NULL REFERENCES tasks (id),
      position INTEGER NOT NULL,
      mime_type VARCHAR(32) NOT NULL,
      bytes INTEGER NOT NULL,
      sha256 VARCHAR(64) NOT NULL,
      data_base64 TEXT NOT NULL,
      PRIMARY KEY (task_id, position))`);
    await queryRunner.query(`CREATE TABLE audit_events (
      seq ${serial},
      at VARCHAR(30) NOT NULL,
      actor VARCHAR(320) NOT NULL,
      transport VARCHAR(16) NOT NULL,
      client VARCHAR(200),
      action VARCHAR(64) NOT NULL,
      outcome VARCHAR(16) NOT NULL,
      task_id VARCHAR(36),
      session_id VARCHAR(36),
      detail TEXT NOT NULL)`);
    await queryRunner.query(`CREATE INDEX idx_audit_task ON audit_events (task_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['audit_events', 'task_images', 'tasks', 'sessions']) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
