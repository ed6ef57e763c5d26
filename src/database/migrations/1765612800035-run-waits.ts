import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 35 (ADR 0020): what a run waits for, in a table the run owns (`run_waits`: a kind column, never a
 * tool name; a person's corrections to a running Task are its `steer` rows), and on each Task its budget
 * override, the limit that ended it, how many corrections it took and whether it still takes them.
 */
export class RunWaits1765612800035 implements MigrationInterface {
  name = 'RunWaits1765612800035';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE run_waits (
      id VARCHAR(36) PRIMARY KEY,
      task_id VARCHAR(36) NOT NULL REFERENCES tasks (id),
      session_id VARCHAR(36) NOT NULL,
      owner VARCHAR(320) NOT NULL,
      kind VARCHAR(16) NOT NULL,
      state VARCHAR(16) NOT NULL,
      approval_id VARCHAR(36),
      resume TEXT,
      body TEXT,
      position INTEGER NOT NULL DEFAULT 0,
      created_at VARCHAR(30) NOT NULL,
      taken_at VARCHAR(30))`);
    // The loop's look at its inbox at every step boundary, and a session's open wait.
    await queryRunner.query('CREATE INDEX idx_run_waits_task ON run_waits (task_id, kind, state, position)');
    await queryRunner.query('CREATE INDEX idx_run_waits_session ON run_waits (session_id, state)');
    await queryRunner.query('ALTER TABLE tasks ADD COLUMN budget TEXT');
    await queryRunner.query('ALTER TABLE tasks ADD COLUMN stopped_by VARCHAR(32)');
    await queryRunner.query('ALTER TABLE tasks ADD COLUMN steer_count INTEGER NOT NULL DEFAULT 0');
    await queryRunner.query('ALTER TABLE tasks ADD COLUMN steering_closed BOOLEAN NOT NULL DEFAULT FALSE');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const column of ['steering_closed', 'steer_count', 'stopped_by', 'budget']) await queryRunner.query(`ALTER TABLE tasks DROP COLUMN ${column}`);
    await queryRunner.query('DROP TABLE run_waits');
  }
}
