import { describe, expect, it, jest } from '@jest/globals';
import type { AuditService } from '../../src/audit/audit.service.js';
import { AgentError } from '../../src/common/agent-error.js';
import type { SqlStep } from '../../src/database/plain-sql.js';
import type { Clock } from '../../src/common/clock.js';
import { ScheduleFires } from '../../src/schedules/schedule-fires.js';
import type { NewScheduleRun, Schedule, ScheduleRunRecord, SchedulesRepository } from '../../src/schedules/schedules.repository.js';
import type { TaskQueueService } from '../../src/queue/task-queue.service.js';
import type { UnattendedIntake } from '../../src/schedules/unattended-intake.js';
import { ClaimTaken } from '../../src/schedules/unattended.js';

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
  createdAt: '2026-12-01T08:00:00.000Z',
  updatedAt: '2026-12-01T08:00:00.000Z',
  cron: '* * * * *',
  timezone: 'UTC',
  catchUp: 'none',
  declared: false,
  nextFireAt: '2026-12-06T10:00:00.000Z',
  ...fields,
});

interface Options {
  /** Whether the recording insert lands (false: another replica took the fire). */
  lands?: boolean;
  /** Whether another run of the schedule started one of the owner's active Tasks. */
  active?: boolean;
  start?: UnattendedIntake['start'];
}

/** The fire's collaborators in memory; `recorded` holds the runs stored without a Task. */
function setUp({ lands = true, active = false, start = async () => undefined }: Options = {}) {
  const recorded: NewScheduleRun[] = [];
  const claimStep: SqlStep = { op: 'all', sql: 'claim', params: [] };
  const repository = {
    claim: jest.fn<SchedulesRepository['claim']>(() => [claimStep]),
    record: jest.fn<SchedulesRepository['record']>(async (run) => lands && recorded.push(run) > 0),
    startedAny: jest.fn<SchedulesRepository['startedAny']>(async (_id, taskIds) => active && taskIds.includes('t-active')),
    keptSession: jest.fn<SchedulesRepository['keptSession']>((id, sessionId) => ({ op: 'run', sql: 'kept', params: [id, sessionId] })),
    run: jest.fn<SchedulesRepository['run']>(async (id) => ({ id }) as ScheduleRunRecord),
  };
  const intake = { start: jest.fn<UnattendedIntake['start']>(start) };
  const audit = { record: jest.fn<AuditService['record']>(async () => undefined) };
  const queue = { activeOf: jest.fn<TaskQueueService['activeOf']>(async () => ['t-active']) };
  const fires = new ScheduleFires(
    repository as unknown as SchedulesRepository,
    intake as unknown as UnattendedIntake,
    audit as unknown as AuditService,
    queue as unknown as TaskQueueService,
    clock,
  );
  return { fires, repository, intake, audit, recorded, claimStep, queue };
}

const UUID = /^[0-9a-f-]{36}$/;

describe('one fire of a schedule (ScheduleFires)', () => {
  const fireAt = new Date('2026-12-06T10:00:00.000Z');

  it('starts the Task as the owner with its approvals, the run that takes the fire committed with it', async () => {
    const { fires, repository, intake, audit, recorded, claimStep } = setUp();
    const run = await fires.fire(schedule({ approvals: 'wait' }), fireAt, 'cron');
    const [owner, work, accepted] = intake.start.mock.calls[0];
    expect(owner).toEqual({ user: 'alice@example.com', groups: ['dev'], email: null });
    expect(work).toEqual({
      surface: 'schedule',
      origin: 'schedule/s1',
      request: 'Write the report',
      sessionId: null,
      tier: 'default',
      approvals: 'wait',
      madeAt: '2026-12-01T08:00:00.000Z',
      taskId: expect.stringMatching(UUID),
      claim: [claimStep],
    });
    const [claimed] = repository.claim.mock.calls[0];
    expect(claimed).toEqual({
      id: expect.stringMatching(UUID),
      scheduleId: 's1',
      fireAt: '2026-12-06T10:00:00.000Z',
      kind: 'cron',
      state: 'started',
      taskId: work.taskId,
      reason: null,
      createdAt: '2026-12-06T10:00:00.300Z',
    });
    expect(accepted).toEqual({ action: 'schedule.fire', detail: { schedule: 's1', run: claimed.id, fire_at: '2026-12-06T10:00:00.000Z', kind: 'cron' } });
    expect(run).toEqual({ id: claimed.id });
    expect(recorded).toEqual([]);
    expect(repository.keptSession).not.toHaveBeenCalled();
    expect(audit.record).not.toHaveBeenCalled();
  });

  it('runs a declared schedule with the groups the configuration gives, never refreshed from the owner’s requests', async () => {
    const { fires, intake } = setUp();
    await fires.fire(schedule({ declared: true }), fireAt, 'cron');
    expect(intake.start.mock.calls[0][1]).toMatchObject({ madeAt: null });
  });

  it('does nothing more when another replica took the fire (the claim refused the Task’s unit)', async () => {
    const { fires, audit, recorded } = setUp({
      start: async () => {
        throw new ClaimTaken();
      },
    });
    expect(await fires.fire(schedule(), fireAt, 'cron')).toBeNull();
    expect(recorded).toEqual([]);
    expect(audit.record).not.toHaveBeenCalled();
  });

  it('skips the fire while the last Task is active, and audits it', async () => {
    const { fires, intake, audit, recorded, queue } = setUp({ active: true });
    await fires.fire(schedule(), fireAt, 'manual');
    expect(queue.activeOf).toHaveBeenCalledWith('alice@example.com');
    expect(intake.start).not.toHaveBeenCalled();
    expect(recorded).toEqual([
      expect.objectContaining({ state: 'skipped', kind: 'manual', taskId: null, reason: 'the previous task of this schedule was still queued or running' }),
    ]);
    expect(audit.record).toHaveBeenCalledWith(expect.objectContaining({ action: 'schedule.skipped', outcome: 'ok' }));
  });

  it('neither records nor audits a skip another replica recorded first', async () => {
    const { fires, audit } = setUp({ active: true, lands: false });
    expect(await fires.fire(schedule(), fireAt, 'cron')).toBeNull();
    expect(audit.record).not.toHaveBeenCalled();
  });

  it('continues its own session, and keeps the session its first Task makes in that Task’s unit', async () => {
    const first = setUp();
    await first.fires.fire(schedule({ sessionMode: 'continue' }), fireAt, 'cron');
    const work = first.intake.start.mock.calls[0][1];
    expect(work).toMatchObject({ sessionId: null, newSessionId: expect.stringMatching(UUID) });
    expect(work.claim).toEqual([first.claimStep, { op: 'run', sql: 'kept', params: ['s1', work.newSessionId] }]);
    const later = setUp();
    await later.fires.fire(schedule({ sessionMode: 'continue', sessionId: 'sess1' }), fireAt, 'cron');
    expect(later.intake.start.mock.calls[0][1]).toMatchObject({ sessionId: 'sess1', newSessionId: undefined, claim: [later.claimStep] });
    expect(later.repository.keptSession).not.toHaveBeenCalled();
  });

  it('records a fire the queue refused with the reason, audited as rejected', async () => {
    const { fires, audit, recorded } = setUp({
      start: async () => {
        throw new AgentError('queue_full', 'you already have 50 tasks waiting');
      },
    });
    await fires.fire(schedule(), fireAt, 'cron');
    expect(recorded).toEqual([expect.objectContaining({ state: 'refused', taskId: null, reason: 'you already have 50 tasks waiting' })]);
    expect(audit.record).toHaveBeenCalledWith(expect.objectContaining({ action: 'schedule.fire', outcome: 'rejected' }));
  });
});
