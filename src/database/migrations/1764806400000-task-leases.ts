import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Leases for running Tasks: `attempt` is the fencing token (incremented on every claim), the owner
 * renews `lease_expires_at` (database time) while it runs, and an expired lease means its runner died.
 */
export class TaskLeases1764806400000 implements MigrationInterface {
  name = 'TaskLeases1764806400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN lease_owner VARCHAR(200)`);
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN lease_expires_at VARCHAR(30)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const column of ['lease_expires_at', 'lease_owner', 'attempt']) {
      await queryRunner.query(`ALTER TABLE tasks DROP COLUMN ${column}`);
    }
  }
}
