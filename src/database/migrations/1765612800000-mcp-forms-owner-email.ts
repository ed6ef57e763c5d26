import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 22: another MCP server's form (elicitation) waits in place like a question, with its schema on
 * the request (`approvals.form`); and the submitter's email on each Task, as the identity said at
 * submission, for an MCP server's `{email}` header (the worker runs the Task later).
 */
export class McpFormsOwnerEmail1765612800000 implements MigrationInterface {
  name = 'McpFormsOwnerEmail1765612800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE approvals ADD COLUMN form TEXT`);
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN owner_email VARCHAR(320)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tasks DROP COLUMN owner_email`);
    await queryRunner.query(`ALTER TABLE approvals DROP COLUMN form`);
  }
}
