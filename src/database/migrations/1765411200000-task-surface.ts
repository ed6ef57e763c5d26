import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The surface that accepted each Task (`mcp-http`, `stdio`, `chat`, `a2a`), for the console's column
 * and filter. Tasks from before this migration keep it empty: the audit log still says, per event.
 */
export class TaskSurface1765411200000 implements MigrationInterface {
  name = 'TaskSurface1765411200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN surface VARCHAR(16)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tasks DROP COLUMN surface`);
  }
}
