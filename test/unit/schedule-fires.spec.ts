import { describe, expect, it, jest } from '@jest/globals';
import type { AuditService } from '../../src/audit/audit.service.js';
import { AgentError } from '../../src/common/agent-error.js';
import type { Clock } from '../../src/common/clock.js';
import { ScheduleFires } from '../../src/schedules/schedule-fires.js';
import type { Schedule, ScheduleRun, SchedulesRepository } from '../../src/schedules/schedules.repository.js';
import type { UnattendedIntake } from '../../src/schedules/unattended-intake.js';

const NOW = Date.parse('2026-12-06T10:00:00.300Z');
const clock: Clock = { now: () => NOW };
const schedule = (fields: Partial<Schedule> = {}): Schedule => ({
  id: 's1',
  owner: { user: 'alice@example.com', groups: ['dev'], email: null },
  name: 'report',
  request: 'Write the report',
  sessionMode: 'new',
  sessionId: null,
  tier: 'default',
  approvals: 'deny',
  notifyUrl: null,
  notifySecret: null,
  enabled: true,
  createdAt: '',
  updatedAt: '',
  cron: '* * * * *',
  timezone: 'UTC',
  catchUp: 'none',
  declared: false,
  nextFireAt: '2026-12-06T10:00:00.000Z',
  ...fields,
});

interface Options {
  /** What the claim answers: the run's id, or null when another replica took the fire. */
  claimed?: string | null;
  /** Whether another run of the schedule is active. */
  active?: boolean;
  start?: UnattendedIntake['start'];
}

/** The fire's collaborators in memory. */
function setUp({ claimed = 'r1', active = false, start = async () => ({ taskId: 't1', sessionId: 'sess1' }) }: Options = {}) {
  const settled: unknown[][] = [];
  const repository = {
    claim: jest.fn<SchedulesRepository['claim']>(async () => claimed),
    active: jest.fn<SchedulesRepository['active']>(async () => active),
    settle: jest.fn<SchedulesRepository['settle']>(async (...args) => void settled.push(args)),
    keepSession: jest.fn<SchedulesRepository['keepSession']>(async () => undefined),
    run: jest.fn<SchedulesRepository['run']>(async (id) => ({ id }) as ScheduleRun),
  };
  const intake = { start: jest.fn<UnattendedIntake['start']>(start) };
  const audit = { record: jest.fn<AuditService['record']>(async () => undefined) };
  const fires = new ScheduleFires(repository as unknown as SchedulesRepository, intake as unknown as UnattendedIntake, audit as unknown as AuditService, clock);
  return { fires, repository, intake, audit, settled };
}

describe('one fire of a schedule (ScheduleFires)', () => {
  const fireAt = new Date('2026-12-06T10:00:00.000Z');

  it('claims the fire by its time, starts the Task as the owner with its approvals, and records it', async () => {
    const { fires, repository, intake, audit, settled } = setUp();
    expect(await fires.fire(schedule({ approvals: 'wait' }), fireAt, 'cron')).toEqual({ id: 'r1' });
    expect(repository.claim).toHaveBeenCalledWith('s1', '2026-12-06T10:00:00.000Z', 'cron', '2026-12-06T10:00:00.300Z');
    // A run still `starting` counts as active for a minute only.
    expect(repository.active).toHaveBeenCalledWith('s1', 'r1', '2026-12-06T09:59:00.300Z');
    expect(intake.start).toHaveBeenCalledWith(
      { user: 'alice@example.com', groups: ['dev'], email: null },
      { surface: 'schedule', origin: 'schedule/s1', request: 'Write the report', sessionId: null, tier: 'default', approvals: 'wait' },
      { action: 'schedule.fire', detail: { schedule: 's1', run: 'r1', fire_at: '2026-12-06T10:00:00.000Z', kind: 'cron' } },
    );
    expect(settled).toEqual([['r1', 'started', 't1', null]]);
    expect(repository.keepSession).not.toHaveBeenCalled();
    expect(audit.record).not.toHaveBeenCalled();
  });

  it('does nothing when another replica took the fire', async () => {
    const { fires, intake, settled } = setUp({ claimed: null });
    expect(await fires.fire(schedule(), fireAt, 'cron')).toBeNull();
    expect(intake.start).not.toHaveBeenCalled();
    expect(settled).toEqual([]);
  });

  it('skips the fire while the last Task is active, and audits it', async () => {
    const { fires, intake, audit, settled } = setUp({ active: true });
    await fires.fire(schedule(), fireAt, 'manual');
    expect(intake.start).not.toHaveBeenCalled();
    expect(settled).toEqual([['r1', 'skipped', null, 'the previous task of this schedule was still queued or running']]);
    expect(audit.record).toHaveBeenCalledWith(expect.objectContaining({ action: 'schedule.skipped', outcome: 'ok' }));
  });

  it('continues its own session, and keeps the session the first Task made', async () => {
    const first = setUp();
    await first.fires.fire(schedule({ sessionMode: 'continue' }), fireAt, 'cron');
    expect(first.intake.start.mock.calls[0][1]).toMatchObject({ sessionId: null });
    expect(first.repository.keepSession).toHaveBeenCalledWith('s1', 'sess1');
    const later = setUp();
    await later.fires.fire(schedule({ sessionMode: 'continue', sessionId: 'sess1' }), fireAt, 'cron');
    expect(later.intake.start.mock.calls[0][1]).toMatchObject({ sessionId: 'sess1' });
    expect(later.repository.keepSession).not.toHaveBeenCalled();
  });

  it('records a fire the queue refused with the reason, audited as rejected', async () => {
    const { fires, audit, settled } = setUp({
      start: async () => {
        throw new AgentError('queue_full', 'you already have 50 tasks waiting');
      },
    });
    await fires.fire(schedule(), fireAt, 'cron');
    expect(settled).toEqual([['r1', 'refused', null, 'you already have 50 tasks waiting']]);
    expect(audit.record).toHaveBeenCalledWith(expect.objectContaining({ action: 'schedule.fire', outcome: 'rejected' }));
  });
});
