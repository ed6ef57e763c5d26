import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 39. `usage_daily`: what each user spent per UTC day (Tasks, model and tool calls, tokens, wall time),
 * one row per (owner, day), added to when each of their Tasks ends: the usage report and the token quota
 * read it without summing every Task. The trace context of each Task on its row, so whichever replica runs
 * it (after a restart too) parents its spans under the Task's span, which continues the caller's trace.
 */
export class UsageAndTraces1765612800039 implements MigrationInterface {
  name = 'UsageAndTraces1765612800039';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE usage_daily (
      owner VARCHAR(320) NOT NULL,
      day VARCHAR(10) NOT NULL,
      tasks INTEGER NOT NULL DEFAULT 0,
      model_calls INTEGER NOT NULL DEFAULT 0,
      tool_calls INTEGER NOT NULL DEFAULT 0,
      input_tokens BIGINT NOT NULL DEFAULT 0,
      output_tokens BIGINT NOT NULL DEFAULT 0,
      wall_ms BIGINT NOT NULL DEFAULT 0,
      PRIMARY KEY (owner, day))`);
    await queryRunner.query('CREATE INDEX idx_usage_daily_day ON usage_daily (day, owner)');
    // The Task's own span (`trace_id`, `span_id`), the caller's span it continues (`trace_parent`, the
    // W3C header as received, validated) and the caller's `tracestate`.
    await queryRunner.query('ALTER TABLE tasks ADD COLUMN trace_id VARCHAR(32)');
    await queryRunner.query('ALTER TABLE tasks ADD COLUMN span_id VARCHAR(16)');
    await queryRunner.query('ALTER TABLE tasks ADD COLUMN trace_parent VARCHAR(55)');
    await queryRunner.query('ALTER TABLE tasks ADD COLUMN trace_state VARCHAR(512)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const column of ['trace_state', 'trace_parent', 'span_id', 'trace_id']) await queryRunner.query(`ALTER TABLE tasks DROP COLUMN ${column}`);
    await queryRunner.query('DROP TABLE usage_daily');
  }
}
