import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `npm run eval` results (issue 41): one row per model and harness of a run, kept so that the doctor can name the
 * configured model's last figures. `figures` is the run's summary as JSON (docs/eval.md), without the per-case runs.
 */
export class EvalResults1765800000041 implements MigrationInterface {
  name = 'EvalResults1765800000041';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE eval_results (
      id VARCHAR(36) NOT NULL PRIMARY KEY,
      model VARCHAR(200) NOT NULL,
      harness VARCHAR(16) NOT NULL,
      service_version VARCHAR(40) NOT NULL,
      finished_at VARCHAR(30) NOT NULL,
      pass_at_1 DOUBLE PRECISION NOT NULL,
      pass_all_n DOUBLE PRECISION NOT NULL,
      repeat_count INTEGER NOT NULL,
      case_count INTEGER NOT NULL,
      complete BOOLEAN NOT NULL,
      figures TEXT NOT NULL)`);
    await queryRunner.query('CREATE INDEX eval_results_model ON eval_results (model, finished_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE eval_results');
  }
}
