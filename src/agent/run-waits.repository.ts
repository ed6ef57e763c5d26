import { Injectable } from '@nestjs/common';
import { PlainSql, sqlStep, type SqlStep } from '../database/plain-sql.js';
import { RunWaitEntity } from './run-wait.entity.js';

/**
 * The run's pauses: `approval`, `question` and `form` rows of run_waits, each with the approvals row a
 * person is shown and the RunState to continue from. (The `steer` rows are SteerInboxRepository's.)
 */
@Injectable()
export class RunWaitsRepository {
  constructor(private readonly sql: PlainSql) {}

  /** The insert of a pause's wait, for the unit of work that stores the pause. */
  insertion(wait: RunWaitEntity): SqlStep {
    return sqlStep.insert(RunWaitEntity, [wait]);
  }

  /** The resume point of the open wait that `approvalId` shows, or null when there is none. */
  async openResume(approvalId: string): Promise<string | null> {
    const [row] = await this.sql.all<{ resume: string | null }>("SELECT resume FROM run_waits WHERE approval_id = ? AND state = 'open' LIMIT 1", [approvalId]);
    return row?.resume ?? null;
  }

  /** Takes the open wait that `approvalId` shows (its Task continues the run): its resume point, or null when none was open. */
  async take(approvalId: string, at: string): Promise<string | null> {
    const [row] = await this.sql.changed<{ resume: string | null }>(
      "UPDATE run_waits SET state = 'taken', taken_at = ? WHERE approval_id = ? AND state = 'open' RETURNING resume",
      [at, approvalId],
    );
    return row?.resume ?? null;
  }
}
