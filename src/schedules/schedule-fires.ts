import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AuditService } from '../audit/audit.service.js';
import { isAgentError } from '../common/agent-error.js';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { SYSTEM_CALLER } from '../identity/caller.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { SchedulesRepository, type Schedule, type ScheduleRunRecord } from './schedules.repository.js';
import { UnattendedIntake } from './unattended-intake.js';
import { ClaimTaken } from './unattended.js';

const SKIPPED = 'the previous task of this schedule was still queued or running';

/**
 * One fire of a schedule, on whichever replica takes it. The fire is skipped while the schedule's
 * previous Task is still queued or running; else its Task is queued as the owner, and the run row that
 * takes the fire (its unique key is the schedule and the fire time) commits in the Task's own unit, so
 * across replicas exactly one lands, and a process that stops before that commit has taken nothing
 * (ADR 0039). A fire the queue refused is recorded with its reason. Every outcome is audited.
 */
@Injectable()
export class ScheduleFires {
  private readonly logger = new Logger('ScheduleFires');

  constructor(
    private readonly schedules: SchedulesRepository,
    private readonly intake: UnattendedIntake,
    private readonly audit: AuditService,
    private readonly queue: TaskQueueService,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** The run this process made of the fire, or null when another replica had taken it. */
  async fire(schedule: Schedule, fireAt: Date, kind: ScheduleRunRecord['kind']): Promise<ScheduleRunRecord | null> {
    const run = { id: randomUUID(), scheduleId: schedule.id, fireAt: fireAt.toISOString(), kind, createdAt: new Date(this.clock.now()).toISOString() };
    const detail = { schedule: schedule.id, run: run.id, fire_at: run.fireAt, kind };
    const caller = { ...SYSTEM_CALLER, user: schedule.owner.user, groups: schedule.owner.groups, transport: 'schedule' as const };
    // The queue owns `tasks`: it names the owner's active Tasks, the schedule's runs say whether one is theirs.
    if (await this.schedules.startedAny(schedule.id, await this.queue.activeOf(schedule.owner.user))) {
      if (!(await this.schedules.record({ ...run, state: 'skipped', taskId: null, reason: SKIPPED }))) return null;
      await this.audit.record({ caller, action: 'schedule.skipped', outcome: 'ok', detail });
      return this.schedules.run(run.id);
    }
    const taskId = randomUUID();
    // The first Task of a `continue` schedule makes its session: kept in the same unit, so no fire can make another.
    const kept = schedule.sessionMode === 'continue' && schedule.sessionId === null ? randomUUID() : null;
    try {
      await this.intake.start(
        schedule.owner,
        {
          surface: 'schedule',
          origin: `schedule/${schedule.id}`,
          request: schedule.request,
          sessionId: schedule.sessionMode === 'continue' ? schedule.sessionId : null,
          newSessionId: kept ?? undefined,
          tier: schedule.tier,
          approvals: schedule.approvals,
          madeAt: schedule.declared ? null : schedule.createdAt,
          taskId,
          claim: [...this.schedules.claim({ ...run, state: 'started', taskId, reason: null }), ...(kept ? [this.schedules.keptSession(schedule.id, kept)] : [])],
        },
        { action: 'schedule.fire', detail },
      );
    } catch (error) {
      if (error instanceof ClaimTaken) return null;
      // The owner's queue limit, a session gone, the service shutting down: recorded on the run, audited.
      const reason = isAgentError(error) ? error.message : 'internal error';
      if (!isAgentError(error)) this.logger.error(`schedule ${schedule.id}: ${(error as Error).message}`);
      if (!(await this.schedules.record({ ...run, state: 'refused', taskId: null, reason }))) return null;
      await this.audit.record({ caller, action: 'schedule.fire', outcome: isAgentError(error) ? 'rejected' : 'error', detail: { ...detail, reason } });
    }
    return this.schedules.run(run.id);
  }
}
