import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Approvals: the pending action of a session (with the model's conversation at the pause), and on each
 * Task the client that submitted it and whether that client can answer in place (Tasks extension).
 */
export class Approvals1765152000000 implements MigrationInterface {
  name = 'Approvals1765152000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN client VARCHAR(200)`);
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN answers_in_place BOOLEAN NOT NULL DEFAULT false`);
    await queryRunner.query(`CREATE TABLE approvals (
      id VARCHAR(36) PRIMARY KEY,
      task_id VARCHAR(36) NOT NULL REFERENCES tasks (id),
      session_id VARCHAR(36) NOT NULL REFERENCES sessions (id),
      owner VARCHAR(320) NOT NULL,
      tool VARCHAR(32) NOT NULL,
      subject TEXT NOT NULL,
      diff TEXT,
      diff_sha256 VARCHAR(64),
      resume TEXT NOT NULL,
      state VARCHAR(16) NOT NULL,
      waiting BOOLEAN NOT NULL DEFAULT false,
      answered_by VARCHAR(320),
      answered_client VARCHAR(200),
      answered_via VARCHAR(16),
      reason TEXT,
      answer_task_id VARCHAR(36),
      created_at VARCHAR(30) NOT NULL,
      answered_at VARCHAR(30))`);
    await queryRunner.query(`CREATE INDEX idx_approvals_session_state ON approvals (session_id, state)`);
    await queryRunner.query(`CREATE INDEX idx_approvals_task ON approvals (task_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE approvals`);
    await queryRunner.query(`ALTER TABLE tasks DROP COLUMN answers_in_place`);
    await queryRunner.query(`ALTER TABLE tasks DROP COLUMN client`);
  }
}
