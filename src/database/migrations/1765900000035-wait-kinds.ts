import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 35 (ADR 0020 §2): what kind of wait an approvals row shows is a column, not its tool name: an
 * action to approve, a question with options (`ask_user`) or another MCP server's form (`mcp_elicitation`).
 * Rows stored before keep their resume point in `approvals.resume`, which the agent still reads when no
 * `run_waits` row holds it; new rows leave it empty.
 */
export class WaitKinds1765900000035 implements MigrationInterface {
  name = 'WaitKinds1765900000035';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE approvals ADD COLUMN kind VARCHAR(16) NOT NULL DEFAULT 'approval'`);
    await queryRunner.query(`UPDATE approvals SET kind = 'question' WHERE tool = 'ask_user'`);
    await queryRunner.query(`UPDATE approvals SET kind = 'form' WHERE tool = 'mcp_elicitation'`);
    // A pause's wait row is found by the approvals row it shows.
    await queryRunner.query('CREATE INDEX idx_run_waits_approval ON run_waits (approval_id)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX idx_run_waits_approval');
    await queryRunner.query('ALTER TABLE approvals DROP COLUMN kind');
  }
}
