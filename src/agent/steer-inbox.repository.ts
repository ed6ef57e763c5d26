import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { nowIso } from '../common/clock.js';
import { PlainSql, sqlStep, type SqlStep } from '../database/plain-sql.js';
import type { SteerMessage } from './core/run-state.js';
import { RunWaitEntity } from './run-wait.entity.js';

/** Why a correction was not taken by the running Task (the unit's guard throws it; nothing is stored). */
export class SteerRefused extends Error {
  constructor(readonly reason: 'not_running' | 'limit') {
    super(reason === 'limit' ? 'the Task takes no more corrections' : 'the Task is not running');
    this.name = 'SteerRefused';
  }
}

type CountStep = Extract<SqlStep, { op: 'all' }>;

/**
 * The run's inbox of corrections: `steer` rows of run_waits. Accepting one counts it on the Task's row
 * (`steer_count`, the queue's step: it owns `tasks`) in the same unit, and closing the inbox is the queue's
 * update of that row (`steering_closed`, TasksRepository.closeSteering), so both serialise on it on SQLite
 * and on PostgreSQL: a correction is either taken by the run or refused (and queued as a follow-up), never lost.
 */
@Injectable()
export class SteerInboxRepository {
  constructor(private readonly sql: PlainSql) {}

  /**
   * The writes that accept `text` for the running Task `taskId` of `owner`, for a unit of work with its
   * audit event. `counted` is the queue's count of it (TaskQueueService.correctionCount while running),
   * guarded here: SteerRefused when the Task is not running, closed to corrections, or already took `max`.
   */
  acceptance(task: { taskId: string; sessionId: string; owner: string }, counted: CountStep, text: string, max: number): { id: string; writes: SqlStep[] } {
    return this.stored(task, text, [this.counted(counted, max)]);
  }

  /**
   * The writes that keep `text` for the Task `taskId` that paused for the conversation's answer to
   * that request (its inbox closed at the pause): the Task that takes the answer takes it too (RunLoop.resume).
   * `stillPending` is the approvals module's statement matching the request while it waits
   * (ApprovalsRepository.stillPending); guarded here, it throws SteerRefused (`not_running`) when the request
   * was answered first. It updates the request's row, so it serialises with the answer taking that row: a kept
   * correction is either taken by the answering Task or refused (and queued as a follow-up), never lost.
   * `counted` is the queue's count of it in any state of the Task (TaskQueueService.correctionCount).
   */
  keptDuringWait(
    task: { taskId: string; sessionId: string; owner: string },
    stillPending: CountStep,
    counted: CountStep,
    text: string,
    max: number,
  ): { id: string; writes: SqlStep[] } {
    const guard: SqlStep = {
      ...stillPending,
      check: (rows) => {
        if (rows.length === 0) throw new SteerRefused('not_running');
      },
    };
    return this.stored(task, text, [guard, this.counted(counted, max)]);
  }

  /** The count's update, refused when it matched no Task (`not_running`) or passed `max` (`limit`). */
  private counted(step: CountStep, max: number): SqlStep {
    return {
      ...step,
      check: (rows) => {
        if (rows.length === 0) throw new SteerRefused('not_running');
        if (Number((rows[0] as { steer_count: number | string }).steer_count) > max) throw new SteerRefused('limit');
      },
    };
  }

  /**
   * The guards, then the correction's row, numbered after the Task's earlier corrections: each count and
   * its row are written together in one unit, serialised on the Task's row by the count, so the number is
   * the count the guard read.
   */
  private stored(task: { taskId: string; sessionId: string; owner: string }, text: string, guards: SqlStep[]): { id: string; writes: SqlStep[] } {
    const id = randomUUID();
    const insert = sqlStep.run(
      `INSERT INTO run_waits (id, task_id, session_id, owner, kind, state, body, position, created_at)
       SELECT ?, ?, ?, ?, 'steer', 'open', ?, COUNT(*) + 1, ? FROM run_waits WHERE task_id = ? AND kind = 'steer'`,
      [id, task.taskId, task.sessionId, task.owner, text, nowIso(), task.taskId],
    );
    return { id, writes: [...guards, insert] };
  }

  async take(taskId: string): Promise<SteerMessage[]> {
    const rows = await this.sql.changed<{ id: string; body: string; position: number | string; created_at: string }>(
      `UPDATE run_waits SET state = 'taken', taken_at = ? WHERE task_id = ? AND kind = 'steer' AND state = 'open' RETURNING id, body, position, created_at`,
      [nowIso(), taskId],
    );
    return messagesOf(rows);
  }

  /**
   * Ends the corrections kept for the Task `taskId`'s wait that no run will read (the wait ended with no
   * run to continue it): `dropped`, and returned, in order, for the trace of the Task that ended it.
   */
  async dropKept(taskId: string): Promise<SteerMessage[]> {
    const rows = await this.sql.changed<{ id: string; body: string; position: number | string; created_at: string }>(
      `UPDATE run_waits SET state = 'dropped', taken_at = ? WHERE task_id = ? AND kind = 'steer' AND state = 'open' RETURNING id, body, position, created_at`,
      [nowIso(), taskId],
    );
    return messagesOf(rows);
  }

  /** The corrections a Task was sent, in order (its console page). */
  ofTask(taskId: string): Promise<RunWaitEntity[]> {
    return this.sql.entities(RunWaitEntity, "SELECT * FROM run_waits WHERE task_id = ? AND kind = 'steer' ORDER BY position", [taskId]);
  }
}

/** Correction rows as the run reads them: in the order they were sent. */
const messagesOf = (rows: { id: string; body: string; position: number | string; created_at: string }[]): SteerMessage[] =>
  rows.sort((a, b) => Number(a.position) - Number(b.position)).map((row) => ({ id: row.id, text: row.body, at: row.created_at }));
