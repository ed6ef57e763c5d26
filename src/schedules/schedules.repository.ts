import { Injectable } from '@nestjs/common';
import { PlainSql, sqlStep, type SqlStep } from '../database/plain-sql.js';
import type { RunOutcome } from './run-outcomes.js';
import { claimGuard, ownerOf, sqlFlag, type UnattendedSource } from './unattended.js';

export interface Schedule extends UnattendedSource {
  cron: string;
  timezone: string;
  catchUp: 'none' | 'last';
  /** Declared in the configuration (`schedules:`): changed there, not over the API. */
  declared: boolean;
  /** The next time it fires (null when paused or when the expression never fires again). */
  nextFireAt: string | null;
}

/**
 * A fire: started (with its Task), skipped (the last Task was still queued or running) or refused (the
 * queue said no). The `starting` runs an earlier version left are settled by migration SettleStartingRuns.
 */
export interface ScheduleRunRecord {
  id: string;
  scheduleId: string;
  fireAt: string;
  kind: 'cron' | 'manual';
  state: 'started' | 'skipped' | 'refused';
  taskId: string | null;
  reason: string | null;
}

/** A run as the runs page shows it: with its Task's status and the start of its result, which the queue gives (it owns `tasks`, run-outcomes.ts). */
export type ScheduleRun = ScheduleRunRecord & RunOutcome;

/** The columns a PATCH may change. */
export type ScheduleChange = Partial<Pick<Schedule, 'name' | 'cron' | 'timezone' | 'request' | 'sessionMode' | 'tier' | 'approvals' | 'catchUp' | 'enabled' | 'nextFireAt'>>;

const COLUMNS: Record<keyof ScheduleChange, string> = {
  name: 'name',
  cron: 'cron',
  timezone: 'timezone',
  request: 'request',
  sessionMode: 'session_mode',
  tier: 'tier',
  approvals: 'approvals',
  catchUp: 'catch_up',
  enabled: 'enabled',
  nextFireAt: 'next_fire_at',
};

const SELECT = `SELECT id, owner, owner_groups AS "ownerGroups", owner_email AS "ownerEmail", name, request, session_mode AS "sessionMode", session_id AS "sessionId",
  tier, approvals, notify_url AS "notifyUrl", notify_secret AS "notifySecret", enabled, created_at AS "createdAt", updated_at AS "updatedAt", cron, timezone,
  catch_up AS "catchUp", declared, next_fire_at AS "nextFireAt" FROM schedules`;

type Row = Omit<Schedule, 'owner' | 'enabled' | 'declared'> & { owner: string; ownerGroups: string; ownerEmail: string | null; enabled: unknown; declared: unknown };

const scheduleOf = (row: Row): Schedule => ({ ...row, owner: ownerOf(row), enabled: Boolean(row.enabled), declared: Boolean(row.declared) });

/** A fire as it is taken: with its Task (`started`), or without one and why (`skipped`, `refused`). */
export type NewScheduleRun = Pick<ScheduleRunRecord, 'id' | 'scheduleId' | 'fireAt' | 'kind' | 'state' | 'taskId' | 'reason'> & { createdAt: string };

const INSERT_RUN = `INSERT INTO schedule_runs (id, schedule_id, fire_at, kind, state, task_id, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (schedule_id, fire_at) DO NOTHING RETURNING id`;

const runParams = (run: NewScheduleRun) => [run.id, run.scheduleId, run.fireAt, run.kind, run.state, run.taskId, run.reason, run.createdAt];

/** `schedules` and `schedule_runs`. */
@Injectable()
export class SchedulesRepository {
  constructor(private readonly sql: PlainSql) {}

  async insert(schedule: Schedule): Promise<void> {
    await this.insertRow(schedule, '');
  }

  /** A declared schedule, unless another replica starting at the same time stored it first. */
  async insertIfAbsent(schedule: Schedule): Promise<void> {
    await this.insertRow(schedule, ' ON CONFLICT (id) DO NOTHING');
  }

  /** A declared schedule's owner and notify target, as the configuration says now. */
  async updateDeclared(id: string, owner: Schedule['owner'], notify: { url: string; secret: string } | null): Promise<void> {
    await this.sql.run('UPDATE schedules SET owner = ?, owner_groups = ?, owner_email = ?, notify_url = ?, notify_secret = ? WHERE id = ?', [
      owner.user,
      JSON.stringify(owner.groups),
      owner.email,
      notify?.url ?? null,
      notify?.secret ?? null,
      id,
    ]);
  }

  private async insertRow(schedule: Schedule, onConflict: string): Promise<void> {
    const flag = (value: boolean) => sqlFlag(this.sql.dialect, value);
    await this.sql.run(
      `INSERT INTO schedules (id, owner, owner_groups, owner_email, name, request, session_mode, session_id, tier, approvals, notify_url, notify_secret, enabled,
        created_at, updated_at, cron, timezone, catch_up, declared, next_fire_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)${onConflict}`,
      [
        schedule.id,
        schedule.owner.user,
        JSON.stringify(schedule.owner.groups),
        schedule.owner.email,
        schedule.name,
        schedule.request,
        schedule.sessionMode,
        schedule.sessionId,
        schedule.tier,
        schedule.approvals,
        schedule.notifyUrl,
        schedule.notifySecret,
        flag(schedule.enabled),
        schedule.createdAt,
        schedule.updatedAt,
        schedule.cron,
        schedule.timezone,
        schedule.catchUp,
        flag(schedule.declared),
        schedule.nextFireAt,
      ],
    );
  }

  async find(id: string): Promise<Schedule | null> {
    const [row] = await this.sql.all<Row>(`${SELECT} WHERE id = ?`, [id]);
    return row ? scheduleOf(row) : null;
  }

  /** One owner's schedules (or everyone's, `owner` null), oldest first. */
  async list(owner: string | null, limit: number): Promise<Schedule[]> {
    const rows =
      owner === null
        ? await this.sql.all<Row>(`${SELECT} ORDER BY created_at, id LIMIT ?`, [limit])
        : await this.sql.all<Row>(`${SELECT} WHERE owner = ? ORDER BY created_at, id LIMIT ?`, [owner, limit]);
    return rows.map(scheduleOf);
  }

  async countOwned(owner: string): Promise<number> {
    const [row] = await this.sql.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM schedules WHERE owner = ?', [owner]);
    return Number(row.n);
  }

  /** The declared schedules, for the boot's sync with the configuration. */
  async declared(): Promise<Schedule[]> {
    return (await this.sql.all<Row>(`${SELECT} WHERE declared = ?`, [sqlFlag(this.sql.dialect, true)])).map(scheduleOf);
  }

  async update(id: string, change: ScheduleChange, now: string): Promise<void> {
    const entries = Object.entries(change).filter(([, value]) => value !== undefined) as [keyof ScheduleChange, unknown][];
    const sets = entries.map(([key]) => `${COLUMNS[key]} = ?`);
    const values = entries.map(([key, value]) => (key === 'enabled' ? sqlFlag(this.sql.dialect, value as boolean) : value));
    await this.sql.run(`UPDATE schedules SET ${[...sets, 'updated_at = ?'].join(', ')} WHERE id = ?`, [...values, now, id]);
  }

  async remove(id: string): Promise<void> {
    await this.sql.run('DELETE FROM schedule_runs WHERE schedule_id = ?', [id]);
    await this.sql.run('DELETE FROM schedules WHERE id = ?', [id]);
  }

  /** Enabled schedules whose next fire is due by `now`. */
  async due(now: string, limit: number): Promise<Schedule[]> {
    return (await this.sql.all<Row>(`${SELECT} WHERE enabled = ? AND next_fire_at <= ? ORDER BY next_fire_at LIMIT ?`, [sqlFlag(this.sql.dialect, true), now, limit])).map(
      scheduleOf,
    );
  }

  /** Moves the next fire on, unless another replica (or an edit) moved it first. */
  async advance(id: string, from: string, to: string | null): Promise<void> {
    await this.sql.run('UPDATE schedules SET next_fire_at = ? WHERE id = ? AND next_fire_at = ?', [to, id, from]);
  }

  /** The continuing session of a `continue` schedule, kept in the unit of the first Task that makes it. */
  keptSession(id: string, sessionId: string): SqlStep {
    return sqlStep.run('UPDATE schedules SET session_id = ? WHERE id = ? AND session_id IS NULL', [sessionId, id]);
  }

  /**
   * The step that takes the fire for its Task, committed in the Task's unit: the one insert that lands
   * across every replica (the key is the schedule and the fire time); ClaimTaken, refusing the whole
   * unit, when another process took it.
   */
  claim(run: NewScheduleRun): SqlStep[] {
    return [{ ...(sqlStep.all(INSERT_RUN, runParams(run)) as Extract<SqlStep, { op: 'all' }>), check: claimGuard }];
  }

  /** A fire taken without a Task (skipped, refused): true when this insert took it, false when another process had. */
  async record(run: NewScheduleRun): Promise<boolean> {
    return (await this.sql.all(INSERT_RUN, runParams(run))).length > 0;
  }

  /** Whether a run of the schedule started one of `taskIds` (its owner's Tasks still queued or running, TaskQueueService.activeOf). */
  async startedAny(scheduleId: string, taskIds: readonly string[]): Promise<boolean> {
    if (taskIds.length === 0) return false;
    const rows = await this.sql.all(`SELECT id FROM schedule_runs WHERE schedule_id = ? AND task_id IN (${taskIds.map(() => '?').join(', ')}) LIMIT 1`, [scheduleId, ...taskIds]);
    return rows.length > 0;
  }

  async run(runId: string): Promise<ScheduleRunRecord | null> {
    const [row] = await this.sql.all<ScheduleRunRecord>(`${RUNS} WHERE r.id = ?`, [runId]);
    return row ?? null;
  }

  /** A schedule's runs, newest fire first, before `beforeFireAt` when paging. */
  async runs(scheduleId: string, limit: number, beforeFireAt: string | null): Promise<ScheduleRunRecord[]> {
    return beforeFireAt === null
      ? this.sql.all<ScheduleRunRecord>(`${RUNS} WHERE r.schedule_id = ? ORDER BY r.fire_at DESC LIMIT ?`, [scheduleId, limit])
      : this.sql.all<ScheduleRunRecord>(`${RUNS} WHERE r.schedule_id = ? AND r.fire_at < ? ORDER BY r.fire_at DESC LIMIT ?`, [scheduleId, beforeFireAt, limit]);
  }

  /** The schedule whose fire started the Task, or null. */
  async ofTask(taskId: string): Promise<Schedule | null> {
    const [row] = await this.sql.all<{ id: string }>('SELECT schedule_id AS id FROM schedule_runs WHERE task_id = ?', [taskId]);
    return row ? this.find(row.id) : null;
  }
}

const RUNS = `SELECT r.id, r.schedule_id AS "scheduleId", r.fire_at AS "fireAt", r.kind, r.state, r.task_id AS "taskId", r.reason FROM schedule_runs r`;
