import { Injectable } from '@nestjs/common';
import { nowIso } from '../common/clock.js';
import { PlainSql, sqlStep, type SqlStep } from '../database/plain-sql.js';
import { ApprovalEntity, type ApprovalState } from './approval.entity.js';

/** Who answered, how, and why. */
export interface ApprovalAnswer {
  state: Exclude<ApprovalState, 'pending'>;
  answeredBy: string | null;
  answeredClient: string | null;
  answeredVia: 'in_place' | 'conversation' | null;
  reason: string | null;
}

/** I/O for approvals. Every answer is one conditional statement, so one pending action is answered once, on any replica. */
@Injectable()
export class ApprovalsRepository {
  constructor(private readonly sql: PlainSql) {}

  /** The insert of a new request, for the unit of work of its audit event. */
  insertion(row: ApprovalEntity): SqlStep {
    return sqlStep.insert(ApprovalEntity, [row]);
  }

  /**
   * A statement matching the request `id` of `taskId` while it still waits for the conversation's answer,
   * written as an update so that a unit of work holding it serialises with the answer taking the row (on
   * PostgreSQL as on SQLite). Another module's unit of work adds its own `check` on the rows (a guard).
   */
  stillPending(id: string, taskId: string): Extract<SqlStep, { op: 'all' }> {
    return sqlStep.all(`UPDATE approvals SET state = state WHERE id = ? AND task_id = ? AND state = 'pending' AND waiting = FALSE RETURNING id`, [id, taskId]) as Extract<
      SqlStep,
      { op: 'all' }
    >;
  }

  async findById(id: string): Promise<ApprovalEntity | null> {
    const [approval] = await this.sql.select(ApprovalEntity, { id });
    return approval ?? null;
  }

  /** The request a Task holds its slot for, if any (tasks/get of an active Task). */
  async waitingFor(taskId: string): Promise<ApprovalEntity | null> {
    const [approval] = await this.sql.entities(ApprovalEntity, "SELECT * FROM approvals WHERE task_id = ? AND state = 'pending' AND waiting = TRUE LIMIT 1", [taskId]);
    return approval ?? null;
  }

  pendingOfTask(taskId: string): Promise<ApprovalEntity[]> {
    return this.sql.entities(ApprovalEntity, "SELECT * FROM approvals WHERE task_id = ? AND state = 'pending' ORDER BY created_at ASC", [taskId]);
  }

  ofTask(taskId: string): Promise<ApprovalEntity[]> {
    return this.sql.entities(ApprovalEntity, 'SELECT * FROM approvals WHERE task_id = ? ORDER BY created_at ASC', [taskId]);
  }

  async pendingOfSession(sessionId: string): Promise<ApprovalEntity | null> {
    const [approval] = await this.sql.entities(ApprovalEntity, "SELECT * FROM approvals WHERE session_id = ? AND state = 'pending' ORDER BY created_at DESC LIMIT 1", [sessionId]);
    return approval ?? null;
  }

  /** The request that the Task `answerTaskId` answered (that Task continues the run of the request's Task), or null. */
  async answeredBy(answerTaskId: string): Promise<ApprovalEntity | null> {
    const [approval] = await this.sql.entities(ApprovalEntity, 'SELECT * FROM approvals WHERE answer_task_id = ? LIMIT 1', [answerTaskId]);
    return approval ?? null;
  }

  /** Which of `taskIds` have a request nobody has answered yet. */
  async pendingAmong(taskIds: string[]): Promise<Set<string>> {
    if (taskIds.length === 0) return new Set();
    const rows = await this.sql.all<{ task_id: string }>(
      `SELECT DISTINCT task_id FROM approvals WHERE state = 'pending' AND task_id IN (${taskIds.map(() => '?').join(', ')})`,
      taskIds,
    );
    return new Set(rows.map((row) => row.task_id));
  }

  /** The Tasks (of `owner`, or everyone's) with a request nobody has answered yet: at most one per session. */
  async pendingTaskIds(owner: string | undefined): Promise<string[]> {
    const rows = await this.sql.all<{ task_id: string }>(
      `SELECT DISTINCT task_id FROM approvals WHERE state = 'pending'${owner === undefined ? '' : ' AND owner = ?'}`,
      owner === undefined ? [] : [owner],
    );
    return rows.map((row) => row.task_id);
  }

  listPending(limit: number): Promise<ApprovalEntity[]> {
    return this.sql.entities(ApprovalEntity, "SELECT * FROM approvals WHERE state = 'pending' ORDER BY created_at ASC LIMIT ?", [limit]);
  }

  /** An in-place answer (tasks/update): only for the Task's own waiting request, by its owner, once. */
  async answerWaiting(id: string, taskId: string, owner: string, answer: ApprovalAnswer): Promise<boolean> {
    const rows = await this.answerPending({ ...answer, waiting: false, answeredAt: nowIso() }, 'id = ? AND task_id = ? AND owner = ? AND waiting = TRUE', [id, taskId, owner]);
    return rows.length > 0;
  }

  /** The wait ran out: the request stays pending for the conversation; false when an answer came first. */
  async stopWaiting(id: string): Promise<boolean> {
    return (await this.answerPending({ waiting: false }, 'id = ? AND waiting = TRUE', [id])).length > 0;
  }

  /** The wait for a form ran out: it ends unanswered (its server is told so); false when an answer came first. */
  async settleWaiting(id: string): Promise<boolean> {
    return (await this.answerPending({ state: 'cancelled', waiting: false, answeredAt: nowIso() }, 'id = ? AND waiting = TRUE', [id])).length > 0;
  }

  /** Ends a request nobody will answer any more (its Task was cancelled or stopped, or no run can continue it). */
  async settle(id: string, state: 'cancelled' | 'dropped'): Promise<void> {
    await this.answerPending({ state, waiting: false, answeredAt: nowIso() }, 'id = ?', [id]);
  }

  /**
   * The session's pending action, answered by the Task `answerTaskId` that continues the conversation;
   * null when nothing was pending (or another Task took it first).
   */
  async takeForSession(sessionId: string, answerTaskId: string, answer: ApprovalAnswer): Promise<ApprovalEntity | null> {
    const taken = await this.answerPending({ ...answer, waiting: false, answerTaskId, answeredAt: nowIso() }, 'session_id = ?', [sessionId]);
    // The newest, should a session ever hold more than one: the rows as changed, without reading them again.
    return taken.reduce<ApprovalEntity | null>((newest, row) => (newest === null || row.createdAt > newest.createdAt ? row : newest), null);
  }

  /**
   * A person's decision on a request left for the conversation, taken by the new Task `answerTaskId`
   * that carries it: a step for that Task's unit of work, whose guard refuses the unit (and so queues
   * nothing) when the request was no longer pending (the unit reads an UPDATE's changed rows on both drivers).
   */
  decision(id: string, owner: string, answerTaskId: string, answer: ApprovalAnswer, refuse: () => Error): SqlStep[] {
    const set = this.sql.assignments(ApprovalEntity, { ...answer, waiting: false, answerTaskId, answeredAt: nowIso() });
    const update = sqlStep.all(`UPDATE approvals SET ${set.sql} WHERE id = ? AND owner = ? AND waiting = FALSE AND state = 'pending' RETURNING id`, [...set.params, id, owner]);
    return [
      {
        ...(update as Extract<SqlStep, { op: 'all' }>),
        check: (rows) => {
          if (rows.length === 0) throw refuse();
        },
      },
    ];
  }

  /** The request of the session that a Task carries the decision of (`decision`), or null (by the session's index). */
  async decidedBy(sessionId: string, answerTaskId: string): Promise<ApprovalEntity | null> {
    const [approval] = await this.sql.entities(ApprovalEntity, "SELECT * FROM approvals WHERE session_id = ? AND state IN ('granted', 'denied') AND answer_task_id = ? LIMIT 1", [
      sessionId,
      answerTaskId,
    ]);
    return approval ?? null;
  }

  /** Sets `values` on the pending requests matching `where`; answers with the requests as changed. */
  private async answerPending(values: Partial<ApprovalEntity>, where: string, params: unknown[]): Promise<ApprovalEntity[]> {
    const set = this.sql.assignments(ApprovalEntity, values);
    const rows = await this.sql.changed(`UPDATE approvals SET ${set.sql} WHERE ${where} AND state = 'pending' RETURNING *`, [...set.params, ...params]);
    return rows.map((row) => this.sql.hydrate(ApprovalEntity, row));
  }
}
