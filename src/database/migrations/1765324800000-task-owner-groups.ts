import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The submitter's groups on each Task (JSON list), as the identity said at submission: the worker runs
 * the Task later, and an MCP server's `allow_groups` decides by them which tools the agent may see.
 */
export class TaskOwnerGroups1765324800000 implements MigrationInterface {
  name = 'TaskOwnerGroups1765324800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN owner_groups TEXT NOT NULL DEFAULT '[]'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tasks DROP COLUMN owner_groups`);
  }
}
