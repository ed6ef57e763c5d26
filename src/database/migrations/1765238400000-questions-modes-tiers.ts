import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 19: questions with choices (`ask_user`) wait like approvals, with the options the person may
 * choose from; each Task has a mode (`agent`, or `direct`: one model call, no tools) and a model tier.
 */
export class QuestionsModesTiers1765238400000 implements MigrationInterface {
  name = 'QuestionsModesTiers1765238400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE approvals ADD COLUMN options TEXT`);
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN mode VARCHAR(8) NOT NULL DEFAULT 'agent'`);
    await queryRunner.query(`ALTER TABLE tasks ADD COLUMN tier VARCHAR(32) NOT NULL DEFAULT 'default'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE tasks DROP COLUMN tier`);
    await queryRunner.query(`ALTER TABLE tasks DROP COLUMN mode`);
    await queryRunner.query(`ALTER TABLE approvals DROP COLUMN options`);
  }
}
