import { Injectable, Logger } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { isAgentError } from '../common/agent-error.js';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { SYSTEM_CALLER } from '../identity/caller.js';
import { SchedulesRepository, type Schedule, type ScheduleRun } from './schedules.repository.js';
import { UnattendedIntake } from './unattended-intake.js';

/** How long a run may stay `starting` and still count as active (a process that stopped mid-start). */
const STARTING_MS = 60_000;

const SKIPPED = 'the previous task of this schedule was still queued or running';

/**
 * One fire of a schedule, on whichever replica takes it: the run row is claimed first (its unique key is
 * the schedule and the fire time, so across replicas exactly one claim lands), then the fire is skipped
 * when the schedule's previous Task is still being made, queued or running, else its Task is queued as
 * the owner, and the run records what became of it. Every outcome is audited.
 */
@Injectable()
export class ScheduleFires {
  private readonly logger = new Logger('ScheduleFires');

  constructor(
    private readonly schedules: SchedulesRepository,
    private readonly intake: UnattendedIntake,
    private readonly audit: AuditService,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** The run this process made of the fire, or null when another replica had taken it. */
  async fire(schedule: Schedule, fireAt: Date, kind: ScheduleRun['kind']): Promise<ScheduleRun | null> {
    const now = this.clock.now();
    const runId = await this.schedules.claim(schedule.id, fireAt.toISOString(), kind, new Date(now).toISOString());
    if (!runId) return null;
    const detail = { schedule: schedule.id, run: runId, fire_at: fireAt.toISOString(), kind };
    const caller = { ...SYSTEM_CALLER, user: schedule.owner.user, groups: schedule.owner.groups, transport: 'schedule' as const };
    if (await this.schedules.active(schedule.id, runId, new Date(now - STARTING_MS).toISOString())) {
      await this.schedules.settle(runId, 'skipped', null, SKIPPED);
      await this.audit.record({ caller, action: 'schedule.skipped', outcome: 'ok', detail });
      return this.schedules.run(runId);
    }
    try {
      const { taskId, sessionId } = await this.intake.start(
        schedule.owner,
        {
          surface: 'schedule',
          origin: `schedule/${schedule.id}`,
          request: schedule.request,
          sessionId: schedule.sessionMode === 'continue' ? schedule.sessionId : null,
          tier: schedule.tier,
          approvals: schedule.approvals,
        },
        { action: 'schedule.fire', detail },
      );
      await this.schedules.settle(runId, 'started', taskId, null);
      if (schedule.sessionMode === 'continue' && schedule.sessionId === null) await this.schedules.keepSession(schedule.id, sessionId);
    } catch (error) {
      // The owner's queue limit, a session gone, the service shutting down: recorded on the run, audited.
      const reason = isAgentError(error) ? error.message : 'internal error';
      if (!isAgentError(error)) this.logger.error(`schedule ${schedule.id}: ${(error as Error).message}`);
      await this.schedules.settle(runId, 'refused', null, reason);
      await this.audit.record({ caller, action: 'schedule.fire', outcome: isAgentError(error) ? 'rejected' : 'error', detail: { ...detail, reason } });
    }
    return this.schedules.run(runId);
  }
}
