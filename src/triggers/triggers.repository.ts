import { Injectable } from '@nestjs/common';
import { PlainSql, sqlStep, type SqlStep } from '../database/plain-sql.js';
import { claimGuard, ownerOf, sqlFlag, type UnattendedSource } from '../schedules/unattended.js';
import { rateWait, rateWindowStart, TriggerRateExceeded, type RateWindow } from './trigger-rate.js';
import type { TriggerKind } from './trigger-signature.js';

export interface Trigger extends UnattendedSource {
  kind: TriggerKind;
  /** What deliveries are signed with: a GitHub webhook secret, or a Standard Webhooks `whsec_` key. */
  secret: string;
}

/**
 * A delivery: started (with its Task) or refused (the queue said no). The `starting` runs
 * an earlier version left are settled by migration SettleStartingRuns.
 */
export interface TriggerRunRecord {
  id: string;
  triggerId: string;
  deliveryId: string;
  event: string;
  state: 'started' | 'refused';
  taskId: string | null;
  reason: string | null;
  createdAt: string;
}

/** A run as the runs page shows it: with its Task's status and the start of its result, which the queue gives (it owns `tasks`). */
export interface TriggerRun extends TriggerRunRecord {
  taskStatus: string | null;
  taskResult: string | null;
}

export type TriggerChange = Partial<Pick<Trigger, 'name' | 'request' | 'sessionMode' | 'tier' | 'approvals' | 'enabled'>>;

const COLUMNS: Record<keyof TriggerChange, string> = { name: 'name', request: 'request', sessionMode: 'session_mode', tier: 'tier', approvals: 'approvals', enabled: 'enabled' };

const SELECT = `SELECT id, owner, owner_groups AS "ownerGroups", owner_email AS "ownerEmail", name, request, session_mode AS "sessionMode", session_id AS "sessionId",
  tier, approvals, notify_url AS "notifyUrl", notify_secret AS "notifySecret", enabled, created_at AS "createdAt", updated_at AS "updatedAt", kind, secret FROM triggers`;

const RUNS = `SELECT r.id, r.trigger_id AS "triggerId", r.delivery_id AS "deliveryId", r.event, r.state, r.task_id AS "taskId", r.reason, r.created_at AS "createdAt"
  FROM trigger_runs r`;

/** A delivery as it is taken: with its Task (`started`), or refused by the queue and why. */
export type NewTriggerRun = Pick<TriggerRunRecord, 'id' | 'triggerId' | 'deliveryId' | 'event' | 'state' | 'taskId' | 'reason' | 'createdAt'>;

const INSERT_RUN = `INSERT INTO trigger_runs (id, trigger_id, delivery_id, event, state, task_id, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (trigger_id, delivery_id) DO NOTHING RETURNING id`;

const runParams = (run: NewTriggerRun) => [run.id, run.triggerId, run.deliveryId, run.event, run.state, run.taskId, run.reason, run.createdAt];

const WINDOW = 'SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM trigger_runs WHERE trigger_id = ? AND created_at > ?';

type WindowRow = { n: number | string; oldest: string | null };

const windowOf = (row: WindowRow): RateWindow => ({ count: Number(row.n), oldest: row.oldest });

type Row = Omit<Trigger, 'owner' | 'enabled'> & { owner: string; ownerGroups: string; ownerEmail: string | null; enabled: unknown };

const triggerOf = (row: Row): Trigger => ({ ...row, owner: ownerOf(row), enabled: Boolean(row.enabled) });

/** `triggers` and `trigger_runs`. */
@Injectable()
export class TriggersRepository {
  constructor(private readonly sql: PlainSql) {}

  async insert(trigger: Trigger): Promise<void> {
    await this.sql.run(
      `INSERT INTO triggers (id, owner, owner_groups, owner_email, name, request, session_mode, session_id, tier, approvals, notify_url, notify_secret, enabled,
        created_at, updated_at, kind, secret) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        trigger.id,
        trigger.owner.user,
        JSON.stringify(trigger.owner.groups),
        trigger.owner.email,
        trigger.name,
        trigger.request,
        trigger.sessionMode,
        trigger.sessionId,
        trigger.tier,
        trigger.approvals,
        trigger.notifyUrl,
        trigger.notifySecret,
        sqlFlag(this.sql.dialect, trigger.enabled),
        trigger.createdAt,
        trigger.updatedAt,
        trigger.kind,
        trigger.secret,
      ],
    );
  }

  async find(id: string): Promise<Trigger | null> {
    const [row] = await this.sql.all<Row>(`${SELECT} WHERE id = ?`, [id]);
    return row ? triggerOf(row) : null;
  }

  async list(owner: string | null, limit: number): Promise<Trigger[]> {
    const rows =
      owner === null
        ? await this.sql.all<Row>(`${SELECT} ORDER BY created_at, id LIMIT ?`, [limit])
        : await this.sql.all<Row>(`${SELECT} WHERE owner = ? ORDER BY created_at, id LIMIT ?`, [owner, limit]);
    return rows.map(triggerOf);
  }

  async countOwned(owner: string): Promise<number> {
    const [row] = await this.sql.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM triggers WHERE owner = ?', [owner]);
    return Number(row.n);
  }

  async update(id: string, change: TriggerChange, now: string): Promise<void> {
    const entries = Object.entries(change).filter(([, value]) => value !== undefined) as [keyof TriggerChange, unknown][];
    const sets = entries.map(([key]) => `${COLUMNS[key]} = ?`);
    const values = entries.map(([key, value]) => (key === 'enabled' ? sqlFlag(this.sql.dialect, value as boolean) : value));
    await this.sql.run(`UPDATE triggers SET ${[...sets, 'updated_at = ?'].join(', ')} WHERE id = ?`, [...values, now, id]);
  }

  async remove(id: string): Promise<void> {
    await this.sql.run('DELETE FROM trigger_runs WHERE trigger_id = ?', [id]);
    await this.sql.run('DELETE FROM triggers WHERE id = ?', [id]);
  }

  /** The continuing session of a `continue` trigger, kept in the unit of the first Task that makes it. */
  keptSession(id: string, sessionId: string): SqlStep {
    return sqlStep.run('UPDATE triggers SET session_id = ? WHERE id = ? AND session_id IS NULL', [sessionId, id]);
  }

  /**
   * The steps that take the delivery for its Task, committed in the Task's unit: under the trigger's
   * rate (counted over its runs of the last minute; on PostgreSQL under a lock per trigger, so that two
   * replicas' deliveries are counted one after the other), then the one insert that lands for the
   * delivery id on any replica. TriggerRateExceeded or ClaimTaken refuse the whole unit.
   */
  claim(run: NewTriggerRun, perMinute: number, now: number): SqlStep[] {
    const lock = this.sql.dialect === 'postgres' ? [sqlStep.all('SELECT pg_advisory_xact_lock(hashtext(?)) AS locked', [`oam.trigger.${run.triggerId}`])] : [];
    const rate: SqlStep = {
      ...(sqlStep.all(WINDOW, [run.triggerId, rateWindowStart(now)]) as Extract<SqlStep, { op: 'all' }>),
      check: (rows) => {
        const wait = rateWait(windowOf(rows[0] as WindowRow), perMinute, now);
        if (wait > 0) throw new TriggerRateExceeded(wait);
      },
    };
    return [...lock, rate, { ...(sqlStep.all(INSERT_RUN, runParams(run)) as Extract<SqlStep, { op: 'all' }>), check: claimGuard }];
  }

  /** A delivery taken without a Task (the queue refused it): true when this insert took it, false when another process had. */
  async record(run: NewTriggerRun): Promise<boolean> {
    return (await this.sql.all(INSERT_RUN, runParams(run))).length > 0;
  }

  /** The trigger's deliveries of the last minute, for a refusal before anything is staged. */
  async rateWindow(triggerId: string, now: number): Promise<RateWindow> {
    const [row] = await this.sql.all<WindowRow>(WINDOW, [triggerId, rateWindowStart(now)]);
    return windowOf(row);
  }

  async runOfDelivery(triggerId: string, deliveryId: string): Promise<TriggerRunRecord | null> {
    const [row] = await this.sql.all<TriggerRunRecord>(`${RUNS} WHERE r.trigger_id = ? AND r.delivery_id = ?`, [triggerId, deliveryId]);
    return row ?? null;
  }

  async run(runId: string): Promise<TriggerRunRecord | null> {
    const [row] = await this.sql.all<TriggerRunRecord>(`${RUNS} WHERE r.id = ?`, [runId]);
    return row ?? null;
  }

  /** A trigger's runs, newest first, before `beforeCreatedAt` when paging. */
  async runs(triggerId: string, limit: number, beforeCreatedAt: string | null): Promise<TriggerRunRecord[]> {
    return beforeCreatedAt === null
      ? this.sql.all<TriggerRunRecord>(`${RUNS} WHERE r.trigger_id = ? ORDER BY r.created_at DESC, r.id LIMIT ?`, [triggerId, limit])
      : this.sql.all<TriggerRunRecord>(`${RUNS} WHERE r.trigger_id = ? AND r.created_at < ? ORDER BY r.created_at DESC, r.id LIMIT ?`, [triggerId, beforeCreatedAt, limit]);
  }

  async ofTask(taskId: string): Promise<Trigger | null> {
    const [row] = await this.sql.all<{ id: string }>('SELECT trigger_id AS id FROM trigger_runs WHERE task_id = ?', [taskId]);
    return row ? this.find(row.id) : null;
  }
}
