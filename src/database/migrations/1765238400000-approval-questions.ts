import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Questions with choices (`ask_user`) wait like approvals: the options the person may choose from. */
export class ApprovalQuestions1765238400000 implements MigrationInterface {
  name = 'ApprovalQuestions1765238400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE approvals ADD COLUMN options TEXT`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE approvals DROP COLUMN options`);
  }
}
