import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { ApprovalEntity, PersonAskKind } from '../approvals/approval.entity.js';
import type { ApprovalDraft } from '../approvals/approvals.service.js';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { RunWaitEntity } from './run-wait.entity.js';
import { RunWaitsRepository } from './run-waits.repository.js';

/** A run that stopped to wait for a person: whose, what kind of wait, and the approvals row that shows it. */
export interface RunPause {
  taskId: string;
  sessionId: string;
  owner: string;
  kind: PersonAskKind;
  approvalId: string;
}

/**
 * The run's pauses, in the table the run owns (ADR 0020 §2): each one a `run_waits` row of its kind with
 * the RunState to continue from, stored in one unit of work with the request a person is shown (when
 * that was not stored already, for an answer in place). A crash or a failed write leaves both or neither.
 */
@Injectable()
export class PausedRuns {
  constructor(
    private readonly waits: RunWaitsRepository,
    private readonly unitOfWork: UnitOfWork,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** Stores `pause` with its resume point and, when `shown` is not stored yet, the request and its audit event. */
  async store(pause: RunPause, resume: string, shown: ApprovalDraft | null): Promise<void> {
    const wait = Object.assign(new RunWaitEntity(), {
      id: randomUUID(),
      ...pause,
      state: 'open',
      resume,
      body: null,
      position: 0,
      createdAt: nowIso(this.clock),
      takenAt: null,
    } satisfies RunWaitEntity);
    await this.unitOfWork.commit({ writes: [...(shown?.writes ?? []), this.waits.insertion(wait)], shared: shown?.shared ?? [] });
  }

  /** The resume point of the pause `approval` shows, not taken (the model it stopped on); null: no run can continue it. */
  async resumeOf(approval: Pick<ApprovalEntity, 'id' | 'resume'>): Promise<string | null> {
    return (await this.waits.openResume(approval.id)) ?? storedBefore(approval);
  }

  /** Takes the pause `approval` shows for the Task that continues it: its resume point, or null when no run can continue it. */
  async take(approval: Pick<ApprovalEntity, 'id' | 'resume'>): Promise<string | null> {
    return (await this.waits.take(approval.id, nowIso(this.clock))) ?? storedBefore(approval);
  }
}

/** A request stored before the run's waits (issue 35) kept its resume point in its own row; later rows leave it empty. */
const storedBefore = (approval: Pick<ApprovalEntity, 'resume'>): string | null => (approval.resume === '' ? null : approval.resume);
