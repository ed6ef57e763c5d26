import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 36: the language (`ja` or `en`) of the texts a person reads about each Task outside MCP, as the
 * Chat API, A2A or the console asked for it (Accept-Language). Empty for MCP Tasks (their texts follow
 * `mcp.locale`) and for Tasks older than the column.
 */
export class TaskLocale1765800000036 implements MigrationInterface {
  name = 'TaskLocale1765800000036';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN locale VARCHAR(8)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tasks DROP COLUMN locale`);
  }
}
