import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A session's prelude: the conversation a Chat API client sent with its first request (the messages
 * before the last one), kept as the session's history ahead of its Tasks.
 */
export class SessionPrelude1765068000000 implements MigrationInterface {
  name = 'SessionPrelude1765068000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sessions ADD COLUMN prelude TEXT`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sessions DROP COLUMN prelude`);
  }
}
