import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The execution trace of each Task: one row per model call, tool call, command and file operation. */
export class TaskSteps1764720000000 implements MigrationInterface {
  name = 'TaskSteps1764720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const serial = queryRunner.connection.options.type === 'postgres' ? 'SERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT';
    await queryRunner.query(`CREATE TABLE task_steps (
      seq ${serial},
      task_id VARCHAR(36) NOT NULL REFERENCES tasks (id),
      subtask VARCHAR(64) NOT NULL DEFAULT '',
      kind VARCHAR(16) NOT NULL,
      name VARCHAR(200) NOT NULL,
      outcome VARCHAR(16) NOT NULL,
      input_tokens INTEGER NOT NULL DEFAULT 0,
      output_tokens INTEGER NOT NULL DEFAULT 0,
      duration_ms INTEGER NOT NULL DEFAULT 0,
      detail TEXT NOT NULL,
      started_at VARCHAR(30) NOT NULL)`);
    await queryRunner.query(`CREATE INDEX idx_task_steps_task ON task_steps (task_id, seq)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE task_steps`);
  }
}
