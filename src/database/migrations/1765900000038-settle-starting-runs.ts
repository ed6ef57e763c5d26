import type { MigrationInterface, QueryRunner } from 'typeorm';

/** What a settled run says: nothing can tell now whether its Task was ever stored. */
export const LOST_RUN_REASON = 'lost: the process stopped between claiming this run and queueing its Task (a run an earlier version left)';

/**
 * Issue 38 (ADR 0039): an earlier version claimed a fire or a delivery in one commit (`state = 'starting'`)
 * and queued its Task in a second; a process stopped in between left the run `starting` for ever, and no
 * version writes that state any more. Such a run whose Task was stored becomes `started`; any other is
 * `refused` with LOST_RUN_REASON, so that no view shows a run still starting and the state is gone from the API.
 * Not undone: which run was `starting` is not kept.
 */
export class SettleStartingRuns1765900000038 implements MigrationInterface {
  name = 'SettleStartingRuns1765900000038';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['schedule_runs', 'trigger_runs']) {
      await queryRunner.query(`UPDATE ${table} SET state = 'started' WHERE state = 'starting' AND task_id IN (SELECT id FROM tasks)`);
      await queryRunner.query(`UPDATE ${table} SET state = 'refused', task_id = NULL, reason = '${LOST_RUN_REASON}' WHERE state = 'starting'`);
    }
  }

  async down(): Promise<void> {
    // Nothing to undo: the earlier version reads `started` and `refused` runs as it wrote them.
  }
}
