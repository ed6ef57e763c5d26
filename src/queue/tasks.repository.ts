import { Injectable } from '@nestjs/common';
import type { TaskProgress } from '../agent/agent-runner.js';
import { nowIso } from '../common/clock.js';
import { PlainSql, sqlStep, type SqlStep } from '../database/plain-sql.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { TaskImageEntity } from './task-image.entity.js';
import { ACTIVE_STATUSES, TASK_STATUSES, type TaskStatus } from './task-status.js';
import { TaskEntity } from './task.entity.js';

const INSERT_IMAGE = 'INSERT INTO task_images (task_id, position, mime_type, bytes, sha256, data) VALUES (?, ?, ?, ?, ?, ?)';

/** A runner's claim on a Task: every write it makes is fenced by the attempt and the owner. */
export interface Lease {
  taskId: string;
  attempt: number;
  owner: string;
}

/** A Task as its fenced ending left it: whose it is and the tokens it spent (all its attempts' reports, as on its row). */
export interface FinishedTask {
  owner: string;
  inputTokens: number;
  outputTokens: number;
}

/** Where a Task stands, as a page of another module's records shows it next to their Task ids. */
export interface TaskOutcome {
  status: TaskStatus;
  /** The start of its result (null while it has none). */
  result: string | null;
}

export interface TaskFilters {
  /** One status, or any of several (A2A's WORKING is planning or running). */
  status?: TaskStatus | TaskStatus[];
  owner?: string;
  sessionId?: string;
  /** Only Tasks with an approval nobody has answered yet (in place or in the conversation): TaskQueueService asks the approvals for them. */
  awaitingApproval?: boolean;
  /** Only these Tasks (what `awaitingApproval` resolved to). */
  ids?: string[];
  /** Words in the request or the result, case-insensitively. */
  text?: string;
  /** Created at or after / before these ISO instants. */
  createdFrom?: string;
  createdBefore?: string;
  /** Last changed (`updated_at`, an A2A Task's status timestamp) at or after this ISO instant. */
  updatedFrom?: string;
  surface?: string;
}

/**
 * When the owner of the queued Task `q` last had a Task start (ISO text, so it orders as time), or
 * NULL; idx_tasks_owner_started answers it from the index.
 */
const LAST_START = (q: string) => `SELECT MAX(s.started_at) FROM tasks s WHERE s.owner = ${q}.owner AND s.started_at IS NOT NULL`;

/** `IN (?, ?)` for the active statuses, and its parameters. */
const ACTIVE = { sql: `(${ACTIVE_STATUSES.map(() => '?').join(', ')})`, params: [...ACTIVE_STATUSES] };

/**
 * I/O for Tasks and their images, in plain SQL (PlainSql). Each multi-step operation is one statement
 * or one transaction named after what it does; writes that must be fenced or counted end in RETURNING.
 */
@Injectable()
export class TasksRepository {
  constructor(private readonly sql: PlainSql) {}

  /**
   * The identity `user` presented with their latest Task sent in person (not by a schedule or trigger)
   * that started after `since`: what a schedule or trigger of theirs runs as (ADR 0039). The index
   * (owner, started_at) finds it from the newest end; Tasks still queued have told nothing yet.
   */
  async presentedSince(user: string, since: string): Promise<{ groups: string[]; email: string | null } | null> {
    const [latest] = await this.sql.all<{ groups: string; email: string | null }>(
      `SELECT owner_groups AS groups, owner_email AS email FROM tasks
        WHERE owner = ? AND started_at IS NOT NULL AND started_at > ? AND created_at > ? AND surface NOT IN ('schedule', 'trigger')
        ORDER BY started_at DESC LIMIT 1`,
      [user, since, since],
    );
    return latest ? { groups: JSON.parse(latest.groups) as string[], email: latest.email } : null;
  }

  /** The id of the session's newest Task, or null (which request its latest turn decided: ApprovalsService.decidedLast). */
  async newestOfSession(sessionId: string): Promise<string | null> {
    const [row] = await this.sql.all<{ id: string }>('SELECT id FROM tasks WHERE session_id = ? ORDER BY seq DESC LIMIT 1', [sessionId]);
    return row?.id ?? null;
  }

  /**
   * The step that counts one more correction on the Task `taskId` of `owner` (`steer_count`, returned),
   * for the intake's unit that stores the correction (SteerInboxRepository guards on the count it returns).
   * `running`: only while the Task runs and still takes corrections, so it serialises on the Task's row with
   * `closeSteering`; otherwise in any state (a correction kept for a paused Task, guarded by its request).
   */
  correctionCount(taskId: string, owner: string, running: boolean): Extract<SqlStep, { op: 'all' }> {
    const open = running ? " AND status IN ('planning', 'running') AND steering_closed = FALSE" : '';
    return sqlStep.all(`UPDATE tasks SET steer_count = steer_count + 1 WHERE id = ? AND owner = ?${open} RETURNING steer_count`, [taskId, owner]) as Extract<
      SqlStep,
      { op: 'all' }
    >;
  }

  /**
   * Closes the Task to corrections unless more than the `received` first were counted (SteerInbox.close):
   * a correction counted after this becomes a follow-up Task.
   */
  async closeSteering(taskId: string, received: number): Promise<boolean> {
    return (await this.sql.changed('UPDATE tasks SET steering_closed = TRUE WHERE id = ? AND steer_count <= ? RETURNING id', [taskId, received])).length > 0;
  }

  /** The ids of `owner`'s Tasks still queued or running: at most their queue limit and the runners (idx_tasks_status_seq). */
  async activeOf(owner: string): Promise<string[]> {
    const rows = await this.sql.all<{ id: string }>("SELECT id FROM tasks WHERE status IN ('queued', 'planning', 'running') AND owner = ?", [owner]);
    return rows.map((row) => row.id);
  }

  /** The agent_status / tasks/get lookup, on every poll of every client. */
  async findById(id: string): Promise<TaskEntity | null> {
    const [task] = await this.sql.select(TaskEntity, { id });
    return task ?? null;
  }

  /** The status of each of `taskIds` that exists, and the first `resultChars` characters of its result: one query, for a page of at most a few hundred. */
  async outcomes(taskIds: readonly string[], resultChars: number): Promise<Map<string, TaskOutcome>> {
    if (taskIds.length === 0) return new Map();
    const rows = await this.sql.all<{ id: string; status: TaskStatus; result: string | null }>(
      `SELECT id, status, SUBSTR(result, 1, ?) AS result FROM tasks WHERE id IN (${taskIds.map(() => '?').join(', ')})`,
      [resultChars, ...taskIds],
    );
    return new Map(rows.map((row) => [row.id, { status: row.status, result: row.result }]));
  }

  /** The inserts a new Task consists of (the Task, then its images in order), for its unit of work. */
  insertion(task: TaskEntity, images: TaskImageEntity[]): SqlStep[] {
    return [
      sqlStep.insert(TaskEntity, [task]),
      ...images.map((image) => sqlStep.run(INSERT_IMAGE, [image.taskId, image.position, image.mimeType, image.bytes, image.sha256, image.data])),
    ];
  }

  list(filters: TaskFilters, limit: number, beforeSeq: number | null): Promise<TaskEntity[]> {
    const { where, params } = whereOf(filters, beforeSeq === null ? [] : [['seq < ?', beforeSeq]]);
    return this.sql.entities(TaskEntity, `SELECT * FROM tasks ${where} ORDER BY seq DESC LIMIT ?`, [...params, limit]);
  }

  /** How many Tasks match the filters (A2A ListTasks reports it beside each page). */
  async count(filters: TaskFilters): Promise<number> {
    const { where, params } = whereOf(filters, []);
    const [row] = await this.sql.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM tasks ${where}`, params);
    return Number(row.n);
  }

  /**
   * For each queued Task of `tasks`, its place in the queue (1 runs next) under the fair order of
   * claimNext: owners take turns, the one served longest ago first, each with their oldest Task. With
   * owners in that order and a Task the r-th oldest (0-based) of its owner at owner index i, r full
   * rounds run before it (every owner's first r Tasks, or all of theirs), then the r-th Tasks of the
   * owners before i.
   */
  async queuePositions(tasks: readonly Pick<TaskEntity, 'id' | 'status'>[]): Promise<Map<string, number>> {
    const wanted = new Set(tasks.filter((task) => task.status === 'queued').map((task) => task.id));
    if (wanted.size === 0) return new Map();
    const rows = await this.sql.all<{ id: string; owner: string; last_start: string | null }>(
      `SELECT q.id AS id, q.owner AS owner, (${LAST_START('q')}) AS last_start FROM tasks q WHERE q.status = 'queued' ORDER BY q.seq`,
    );
    const byOwner = new Map<string, { lastStart: string | null; ids: string[] }>();
    for (const row of rows) {
      const owner = byOwner.get(row.owner) ?? byOwner.set(row.owner, { lastStart: row.last_start, ids: [] }).get(row.owner)!;
      owner.ids.push(row.id);
    }
    // Map order is the order of each owner's oldest Task; a stable sort keeps it among equals.
    const owners = [...byOwner.values()].sort((a, b) => (a.lastStart ?? '').localeCompare(b.lastStart ?? ''));
    const positions = new Map<string, number>();
    owners.forEach((owner, index) =>
      owner.ids.forEach((id, rank) => {
        if (!wanted.has(id)) return;
        const rounds = owners.reduce((sum, other) => sum + Math.min(other.ids.length, rank), 0);
        const before = owners.slice(0, index).filter((other) => other.ids.length > rank).length;
        positions.set(id, rounds + before + 1);
      }),
    );
    return positions;
  }

  /**
   * A step for a new Task's unit of work that fails it (and so the whole unit, Task and audit event)
   * when the owner would have more than `limit` queued Tasks. In the Task's own transaction: exact on
   * SQLite (one writer at a time) and on PostgreSQL (the owner's advisory lock, taken first, orders
   * concurrent submissions of one owner across replicas).
   */
  queuedLimit(owner: string, limit: number, refuse: (queued: number) => Error): { before: SqlStep[]; after: SqlStep[] } {
    const lock = this.sql.dialect === 'postgres' ? [sqlStep.all('SELECT pg_advisory_xact_lock(hashtext(?)) AS locked', [`oam.queue.${owner}`])] : [];
    const check: SqlStep = {
      ...(sqlStep.all("SELECT COUNT(*) AS n FROM tasks WHERE owner = ? AND status = 'queued'", [owner]) as Extract<SqlStep, { op: 'all' }>),
      check: (rows) => {
        // Counted with the new Task: more than the limit means the limit was already reached.
        const queued = Number((rows[0] as { n: number | string }).n);
        if (queued > limit) throw refuse(queued - 1);
      },
    };
    return { before: lock, after: [check] };
  }

  async countByStatus(): Promise<Record<TaskStatus, number>> {
    const rows = await this.sql.all<{ status: TaskStatus; n: number | string }>('SELECT status, COUNT(*) AS n FROM tasks GROUP BY status');
    const counts = Object.fromEntries(TASK_STATUSES.map((status) => [status, 0])) as Record<TaskStatus, number>;
    for (const row of rows) counts[row.status] = Number(row.n);
    return counts;
  }

  /** A Task's images with their bytes, in submission order. */
  async imageData(taskId: string): Promise<{ mimeType: string; data: Buffer }[]> {
    const rows = await this.sql.all<{ mime_type: string; data: Buffer }>('SELECT mime_type, data FROM task_images WHERE task_id = ? ORDER BY position', [taskId]);
    return rows.map((row) => ({ mimeType: row.mime_type, data: row.data }));
  }

  /** Completed earlier turns of a session, oldest first: the conversation sent back as context. */
  history(sessionId: string, beforeSeq: number): Promise<TaskEntity[]> {
    return this.sql.entities(TaskEntity, "SELECT * FROM tasks WHERE session_id = ? AND status = 'completed' AND seq < ? ORDER BY seq ASC", [sessionId, beforeSeq]);
  }

  /** Image metadata (no bytes) of the given Tasks. */
  async imagesOf(taskIds: string[]): Promise<TaskImageEntity[]> {
    if (taskIds.length === 0) return [];
    return this.sql.entities(
      TaskImageEntity,
      `SELECT task_id, position, mime_type, bytes, sha256 FROM task_images WHERE task_id IN (${taskIds.map(() => '?').join(', ')})`,
      taskIds,
    );
  }

  /**
   * Moves the next queued Task to `planning` under a new lease, in one statement (no read-then-write
   * transaction, whose stale snapshot SQLite would refuse to upgrade), and answers with it. Fair by
   * owner: the next Task is the oldest of the owner whose last Task started longest ago (never: first;
   * among equals, the owner waiting with the oldest Task), so one user's flood of Tasks delays every
   * other user by at most one Task each. The partial unique index allows one active Task, so while
   * another one is active, in any process or replica, nothing is claimed.
   */
  async claimNext(owner: string, leaseMs: number): Promise<TaskEntity | null> {
    const { now, nowPlus } = this.sql.clock;
    try {
      const [claimed] = await this.sql.changed(
        `UPDATE tasks SET status = 'planning', attempt = attempt + 1, lease_owner = ?, lease_expires_at = ${nowPlus(leaseMs)}, ` +
          `started_at = ${now()}, updated_at = ${now()} ` +
          `WHERE status = 'queued' AND seq = (SELECT q.seq FROM tasks q WHERE q.status = 'queued' ORDER BY (${LAST_START('q')}) ASC NULLS FIRST, q.seq ASC LIMIT 1) RETURNING *`,
        [owner],
      );
      return claimed ? this.sql.hydrate(TaskEntity, claimed) : null;
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  /** Renews the lease; false when it is no longer ours (reclaimed after a stall): the runner must stop. */
  async renew(lease: Lease, leaseMs: number): Promise<{ held: boolean; cancelRequested: boolean }> {
    const [row] = await this.fencedUpdate(lease, `lease_expires_at = ${this.sql.clock.nowPlus(leaseMs)}`, [], 'cancel_requested');
    if (!row) return { held: false, cancelRequested: false };
    return { held: true, cancelRequested: this.sql.hydrate(TaskEntity, row).cancelRequested };
  }

  async updateProgress(lease: Lease, progress: TaskProgress): Promise<boolean> {
    return this.fencedSet(lease, { ...progress, updatedAt: nowIso() });
  }

  /**
   * Ends the leased Task and returns its owner and token totals as the ending wrote them (what usage adds to
   * the owner's day); null when the lease was lost (another attempt owns the Task now, and ends it).
   */
  async finish(lease: Lease, status: TaskStatus, result: string, progress: TaskProgress = {}): Promise<FinishedTask | null> {
    const at = nowIso();
    const fields = { ...progress, status, result, currentTask: '', leaseOwner: null, leaseExpiresAt: null, updatedAt: at, finishedAt: at };
    const set = this.sql.assignments(TaskEntity, fields);
    const [row] = await this.fencedUpdate(lease, set.sql, set.params, 'owner, input_tokens, output_tokens');
    return row ? { owner: String(row.owner), inputTokens: Number(row.input_tokens), outputTokens: Number(row.output_tokens) } : null;
  }

  /** Cancels a queued Task at once; returns false when it was not queued. */
  async cancelQueued(id: string, reason: string): Promise<boolean> {
    const at = nowIso();
    const rows = await this.sql.changed("UPDATE tasks SET status = 'cancelled', result = ?, updated_at = ?, finished_at = ? WHERE id = ? AND status = 'queued' RETURNING id", [
      reason,
      at,
      at,
      id,
    ]);
    return rows.length > 0;
  }

  /** Flags an active Task for cancellation; its runner, in whichever process, sees it at its next renewal. */
  async requestCancel(id: string): Promise<boolean> {
    const rows = await this.sql.changed(`UPDATE tasks SET cancel_requested = TRUE, updated_at = ? WHERE id = ? AND status IN ${ACTIVE.sql} RETURNING id`, [
      nowIso(),
      id,
      ...ACTIVE.params,
    ]);
    return rows.length > 0;
  }

  /** Active Tasks whose lease has lapsed by database time, or whose owner is known to be dead. */
  async abandoned(deadOwner: (owner: string) => boolean): Promise<TaskEntity[]> {
    const rows = await this.sql.all(
      `SELECT *, CASE WHEN lease_expires_at < ${this.sql.clock.now()} THEN 1 ELSE 0 END AS expired FROM tasks WHERE status IN ${ACTIVE.sql}`,
      ACTIVE.params,
    );
    return rows.filter((row) => Number(row.expired) === 1 || row.lease_owner === null || deadOwner(row.lease_owner as string)).map((row) => this.sql.hydrate(TaskEntity, row));
  }

  /**
   * Takes an abandoned Task back from its previous attempt: to `queued` (nothing irreversible can
   * have happened while planning) or to `failed` with the reason. Fenced, so a runner that renewed in
   * the meantime keeps its Task.
   */
  async reclaim(task: TaskEntity, to: 'queued' | 'failed', reason: string): Promise<boolean> {
    const at = nowIso();
    const fields: Partial<TaskEntity> =
      to === 'queued'
        ? { status: 'queued', leaseOwner: null, leaseExpiresAt: null, currentTask: '', updatedAt: at }
        : { status: 'failed', result: reason, leaseOwner: null, leaseExpiresAt: null, currentTask: '', updatedAt: at, finishedAt: at };
    return this.fencedSet({ taskId: task.id, attempt: task.attempt, owner: task.leaseOwner }, fields);
  }

  private async fencedSet(lease: Fence, fields: Partial<TaskEntity>): Promise<boolean> {
    const set = this.sql.assignments(TaskEntity, fields);
    return (await this.fencedUpdate(lease, set.sql, set.params, 'id')).length > 0;
  }

  /** An UPDATE of the leased Task only: same attempt, same owner (or none, for `owner: null`), still active. */
  private fencedUpdate(lease: Fence, set: string, params: unknown[], returning: string) {
    const owner = lease.owner === null ? 'lease_owner IS NULL' : 'lease_owner = ?';
    return this.sql.changed(`UPDATE tasks SET ${set} WHERE id = ? AND attempt = ? AND status IN ${ACTIVE.sql} AND ${owner} RETURNING ${returning}`, [
      ...params,
      lease.taskId,
      lease.attempt,
      ...ACTIVE.params,
      ...(lease.owner === null ? [] : [lease.owner]),
    ]);
  }
}

/** The filters (and `extra` conditions) as a WHERE clause, every value bound. */
function whereOf(filters: TaskFilters, extra: [string, unknown][]) {
  const conditions: [string, unknown][] = [];
  if (filters.status) {
    const statuses = [filters.status].flat();
    conditions.push([`status IN (${statuses.map(() => '?').join(', ')})`, statuses]);
  }
  if (filters.owner) conditions.push(['owner = ?', [filters.owner]]);
  if (filters.sessionId) conditions.push(['session_id = ?', [filters.sessionId]]);
  if (filters.ids) conditions.push([filters.ids.length === 0 ? '1 = 0' : `id IN (${filters.ids.map(() => '?').join(', ')})`, filters.ids]);
  if (filters.text) {
    const pattern = `%${filters.text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    conditions.push(["(LOWER(request) LIKE ? ESCAPE '\\' OR LOWER(COALESCE(result, '')) LIKE ? ESCAPE '\\')", [pattern, pattern]]);
  }
  if (filters.createdFrom) conditions.push(['created_at >= ?', [filters.createdFrom]]);
  if (filters.createdBefore) conditions.push(['created_at < ?', [filters.createdBefore]]);
  if (filters.updatedFrom) conditions.push(['updated_at >= ?', [filters.updatedFrom]]);
  if (filters.surface) conditions.push(['surface = ?', [filters.surface]]);
  for (const [condition, value] of extra) conditions.push([condition, [value]]);
  return {
    where: conditions.length > 0 ? `WHERE ${conditions.map(([condition]) => condition).join(' AND ')}` : '',
    params: conditions.flatMap(([, values]) => values as unknown[]),
  };
}

/** A lease, or the claim of an abandoned Task that may have no owner. */
type Fence = Omit<Lease, 'owner'> & { owner: string | null };
