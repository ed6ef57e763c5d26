import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The fair claim order (TasksRepository.claimNext) asks, for each queued Task, when its owner's last
 * Task started: one index lookup per owner with this index, a scan of the owner's Tasks without it.
 */
export class FairQueueIndex1765240000000 implements MigrationInterface {
  name = 'FairQueueIndex1765240000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX idx_tasks_owner_started ON tasks (owner, started_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX idx_tasks_owner_started`);
  }
}
