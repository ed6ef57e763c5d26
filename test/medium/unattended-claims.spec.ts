import { describe, expect, it, jest } from '@jest/globals';
import type { AuditService } from '../../src/audit/audit.service.js';
import type { Clock } from '../../src/common/clock.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { withMigratedDatabase } from '../../src/database/data-source-options.js';
import { sqlStep, type PlainSql } from '../../src/database/plain-sql.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { ScheduleFires } from '../../src/schedules/schedule-fires.js';
import { SchedulesRepository, type Schedule } from '../../src/schedules/schedules.repository.js';
import type { UnattendedIntake } from '../../src/schedules/unattended-intake.js';
import type { TaskQueueService } from '../../src/queue/task-queue.service.js';
import { TasksRepository } from '../../src/queue/tasks.repository.js';
import { TriggersRepository, type Trigger } from '../../src/triggers/triggers.repository.js';
import { TriggersService, type Delivery } from '../../src/triggers/triggers.service.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

const NOW = Date.parse('2026-12-06T10:00:00.300Z');
const clock: Clock = { now: () => NOW };
const fireAt = new Date('2026-12-06T10:00:00.000Z');

const schedule: Schedule = {
  id: '5c4e1f0a-0000-4000-8000-000000000001',
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
  createdAt: '2026-12-06T09:00:00.000Z',
  updatedAt: '2026-12-06T09:00:00.000Z',
  cron: '* * * * *',
  timezone: 'UTC',
  catchUp: 'none',
  declared: false,
  nextFireAt: fireAt.toISOString(),
};

const audit = { record: jest.fn<AuditService['record']>(async () => undefined) } as unknown as AuditService;

type Start = UnattendedIntake['start'];

/**
 * The intake as far as the fire sees it: the Task's unit (its session and Task rows here, the whole
 * enqueue in the service) commits with the fire's claim steps, or neither is stored.
 */
function committingIntake(sql: PlainSql): Start {
  const unit = new UnitOfWork(sql);
  return async (owner, work) => {
    const { taskId } = work;
    const sessionId = work.newSessionId ?? taskId.replace(/^.{4}/, '5e55');
    const at = new Date(NOW).toISOString();
    await unit.commit({
      writes: [
        sqlStep.run('INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)', [sessionId, owner.user, at]),
        sqlStep.run("INSERT INTO tasks (id, session_id, owner, request, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'queued', ?, ?)", [
          taskId,
          sessionId,
          owner.user,
          work.request,
          at,
          at,
        ]),
        ...work.claim,
      ],
    });
  };
}

/** A process that stops while the Task is being made: the start never comes back. */
function stoppingIntake(): { start: Start; reached: Promise<void> } {
  let reached!: () => void;
  const promise = new Promise<void>((resolve) => (reached = resolve));
  return {
    reached: promise,
    start: () => {
      reached();
      return new Promise(() => undefined);
    },
  };
}

/** The queue's answer the fire asks for (an owner's active Tasks), from the real repository on the same database. */
const queueOn = (sql: PlainSql) => ({ activeOf: (owner: string) => new TasksRepository(sql).activeOf(owner) }) as unknown as TaskQueueService;

const fires = (sql: PlainSql, start: Start) => new ScheduleFires(new SchedulesRepository(sql), { start } as unknown as UnattendedIntake, audit, queueOn(sql), clock);

const runs = (sql: PlainSql) =>
  sql.all<{ state: string; taskStatus: string | null }>('SELECT r.state, t.status AS "taskStatus" FROM schedule_runs r LEFT JOIN tasks t ON t.id = r.task_id', []);

describe.each<DatabaseKind>(['sqlite', 'postgres'])('a fire is claimed with its Task or not at all (%s)', (kind) => {
  it('leaves no claimed fire without a Task when the process stops while the Task is made, so the next look takes the fire', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      await new SchedulesRepository(sql).insert(schedule);
      const stopped = stoppingIntake();
      void fires(sql, stopped.start).fire(schedule, fireAt, 'cron');
      await stopped.reached;
      // What another replica (or this one after its restart, within the misfire grace) finds: nothing claimed.
      expect(await runs(sql)).toEqual([]);
      const run = await fires(sql, committingIntake(sql)).fire(schedule, fireAt, 'cron');
      expect(run).toMatchObject({ state: 'started', taskId: expect.any(String) });
      expect(await runs(sql)).toEqual([{ state: 'started', taskStatus: 'queued' }]);
    });
  });

  it('keeps the session the first Task of a `continue` schedule made, in the same unit as its fire', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      const continuing = { ...schedule, sessionMode: 'continue' as const };
      await new SchedulesRepository(sql).insert(continuing);
      const run = await fires(sql, committingIntake(sql)).fire(continuing, fireAt, 'cron');
      const [kept] = await sql.all<{ sessionId: string }>('SELECT session_id AS "sessionId" FROM schedules WHERE id = ?', [schedule.id]);
      const [task] = await sql.all<{ sessionId: string }>('SELECT session_id AS "sessionId" FROM tasks WHERE id = ?', [run!.taskId]);
      expect(kept.sessionId).toBe(task.sessionId);
    });
  });

  it("skips a fire while the Task of an earlier run is still queued, and fires once it ended (the queue names the owner's active Tasks)", async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      await new SchedulesRepository(sql).insert(schedule);
      const later = (minutes: number) => new Date(fireAt.getTime() + minutes * 60_000);
      const first = await fires(sql, committingIntake(sql)).fire(schedule, fireAt, 'cron');
      expect(await fires(sql, committingIntake(sql)).fire(schedule, later(1), 'cron')).toMatchObject({ state: 'skipped', taskId: null });
      await sql.run("UPDATE tasks SET status = 'completed' WHERE id = ?", [first!.taskId]);
      expect(await fires(sql, committingIntake(sql)).fire(schedule, later(2), 'cron')).toMatchObject({ state: 'started' });
    });
  });

  it('stores one run and one Task when two replicas start the same fire', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      await new SchedulesRepository(sql).insert(schedule);
      const taken = await Promise.all([fires(sql, committingIntake(sql)).fire(schedule, fireAt, 'cron'), fires(sql, committingIntake(sql)).fire(schedule, fireAt, 'cron')]);
      expect(taken.filter((run) => run !== null)).toHaveLength(1);
      expect(await runs(sql)).toEqual([{ state: 'started', taskStatus: 'queued' }]);
      const [tasks] = await sql.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM tasks', []);
      expect(Number(tasks.n)).toBe(1);
    });
  });
});

const trigger: Trigger = {
  ...schedule,
  id: '7a1e0b2c-0000-4000-8000-000000000002',
  name: 'triage',
  request: 'Triage {{payload.title}}',
  kind: 'github',
  secret: 'not used here: the signature is checked before',
};

const delivery = (deliveryId: string): Delivery => ({ deliveryId, event: 'issues', payload: { title: 'broken' }, body: Buffer.from('{"title":"broken"}') });

/** Triggers as one replica runs them, at most `perMinute` deliveries a minute. */
function triggers(sql: PlainSql, start: Start, perMinute = 60) {
  const config = { triggers: { ratePerMinute: perMinute } } as AppConfig;
  return new TriggersService(new TriggersRepository(sql), { start } as unknown as UnattendedIntake, audit, {} as TaskQueueService, config, clock);
}

const deliveries = (sql: PlainSql) =>
  sql.all<{ state: string; taskStatus: string | null }>('SELECT r.state, t.status AS "taskStatus" FROM trigger_runs r LEFT JOIN tasks t ON t.id = r.task_id', []);

describe.each<DatabaseKind>(['sqlite', 'postgres'])('a delivery is taken with its Task or not at all (%s)', (kind) => {
  it('leaves no delivery without a Task when the process stops while the Task is made, so the sender’s retry starts it', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      await new TriggersRepository(sql).insert(trigger);
      const stopped = stoppingIntake();
      void triggers(sql, stopped.start).deliver(trigger, delivery('d1'));
      await stopped.reached;
      expect(await deliveries(sql)).toEqual([]);
      const retried = await triggers(sql, committingIntake(sql)).deliver(trigger, delivery('d1'));
      expect(retried).toMatchObject({ kind: 'taken', run: { state: 'started' } });
      expect(await deliveries(sql)).toEqual([{ state: 'started', taskStatus: 'queued' }]);
    });
  });

  it('starts one Task for a delivery two replicas get at once; the other answers with its run', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      await new TriggersRepository(sql).insert(trigger);
      const outcomes = await Promise.all([
        triggers(sql, committingIntake(sql)).deliver(trigger, delivery('d1')),
        triggers(sql, committingIntake(sql)).deliver(trigger, delivery('d1')),
      ]);
      expect(outcomes.map((outcome) => outcome.kind).sort()).toEqual(['replay', 'taken']);
      const [first, second] = outcomes.map((outcome) => (outcome.kind === 'limited' ? null : outcome.run.id));
      expect(first).toBe(second);
      expect(await deliveries(sql)).toEqual([{ state: 'started', taskStatus: 'queued' }]);
    });
  });

  it('holds the rate across replicas: of six deliveries at once on six replicas, two a minute are taken', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      await new TriggersRepository(sql).insert(trigger);
      // Each with its own transactions: on PostgreSQL, six at once (a pool of connections).
      const outcomes = await Promise.all(['d1', 'd2', 'd3', 'd4', 'd5', 'd6'].map((id) => triggers(sql, committingIntake(sql), 2).deliver(trigger, delivery(id))));
      expect(outcomes.filter((outcome) => outcome.kind === 'taken')).toHaveLength(2);
      expect(outcomes.filter((outcome) => outcome.kind === 'limited')).toEqual(Array(4).fill({ kind: 'limited', retryAfter: 60 }));
      expect(await deliveries(sql)).toHaveLength(2);
    });
  });
});
