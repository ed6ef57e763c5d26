import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { nowIso } from '../common/clock.js';
import { sqlStep, type SqlStep } from '../database/plain-sql.js';
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
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get rows() {
    return this.dataSource.getRepository(ApprovalEntity);
  }

  /** The insert of a new request, for the unit of work of its audit event. */
  insertion(row: ApprovalEntity): SqlStep {
    return sqlStep.insert(ApprovalEntity, [row]);
  }

  findById(id: string): Promise<ApprovalEntity | null> {
    return this.rows.findOneBy({ id });
  }

  /** The request a Task holds its slot for, if any (tasks/get of an active Task). */
  waitingFor(taskId: string): Promise<ApprovalEntity | null> {
    return this.rows.findOneBy({ taskId, state: 'pending', waiting: true });
  }

  pendingOfTask(taskId: string): Promise<ApprovalEntity[]> {
    return this.rows.find({ where: { taskId, state: 'pending' }, order: { createdAt: 'ASC' } });
  }

  pendingOfSession(sessionId: string): Promise<ApprovalEntity | null> {
    return this.rows.findOne({ where: { sessionId, state: 'pending' }, order: { createdAt: 'DESC' } });
  }

  listPending(limit: number): Promise<ApprovalEntity[]> {
    return this.rows.find({ where: { state: 'pending' }, order: { createdAt: 'ASC' }, take: limit });
  }

  /** An in-place answer (tasks/update): only for the Task's own waiting request, by its owner, once. */
  async answerWaiting(id: string, taskId: string, owner: string, answer: ApprovalAnswer): Promise<boolean> {
    const outcome = await this.rows.update({ id, taskId, owner, state: 'pending', waiting: true }, { ...answer, waiting: false, answeredAt: nowIso() });
    return (outcome.affected ?? 0) > 0;
  }

  /** The wait ran out: the request stays pending for the conversation; false when an answer came first. */
  async stopWaiting(id: string): Promise<boolean> {
    const outcome = await this.rows.update({ id, state: 'pending', waiting: true }, { waiting: false });
    return (outcome.affected ?? 0) > 0;
  }

  /** Ends a request nobody will answer any more (its Task was cancelled or stopped). */
  async settle(id: string, state: 'cancelled'): Promise<void> {
    await this.rows.update({ id, state: 'pending' }, { state, waiting: false, answeredAt: nowIso() });
  }

  /**
   * The session's pending action, answered by the Task `answerTaskId` that continues the conversation;
   * null when nothing was pending (or another Task took it first).
   */
  async takeForSession(sessionId: string, answerTaskId: string, answer: ApprovalAnswer): Promise<ApprovalEntity | null> {
    const outcome = await this.rows.update({ sessionId, state: 'pending' }, { ...answer, waiting: false, answerTaskId, answeredAt: nowIso() });
    if (!outcome.affected) return null;
    return this.rows.findOne({ where: { answerTaskId }, order: { createdAt: 'DESC' } });
  }
}
