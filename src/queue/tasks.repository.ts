import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, LessThan, QueryFailedError } from 'typeorm';
import type { ConversationTurn } from '../agent/agent-runner.js';
import { nowIso } from '../common/clock.js';
import { HotPathSql, sqlStep, type SqlStep } from '../database/hot-path-sql.js';
import { sqlClock, type SqlClock } from '../database/sql-clock.js';
import { SessionEntity } from '../sessions/session.entity.js';
import { TaskImageEntity } from './task-image.entity.js';
import { ACTIVE_STATUSES, TASK_STATUSES, type TaskStatus } from './task-status.js';
import { TaskEntity } from './task.entity.js';

/** Progress fields the agent may write while a Task is active. */
export type TaskProgress = Partial<
  Pick<TaskEntity, 'status' | 'completedSubtasks' | 'totalSubtasks' | 'currentTask' | 'inputTokens' | 'outputTokens' | 'criticalPathTokens'>
>;

export interface NewTask {
  newSession: SessionEntity | null;
  task: TaskEntity;
  images: TaskImageEntity[];
}

const INSERT_IMAGE = 'INSERT INTO task_images (task_id, position, mime_type, bytes, sha256, data) VALUES (?, ?, ?, ?, ?, ?)';

/** The inserts a new Task consists of, in order, for the transaction of its accepting audit event. */
export function newTaskWrites({ newSession, task, images }: NewTask): SqlStep[] {
  return [
    ...(newSession ? [sqlStep.insert(SessionEntity, [newSession])] : []),
    sqlStep.insert(TaskEntity, [task]),
    ...images.map((image) => sqlStep.run(INSERT_IMAGE, [image.taskId, image.position, image.mimeType, image.bytes, image.sha256, image.data])),
  ];
}

/** A runner's claim on a Task: every write it makes is fenced by the attempt and the owner. */
export interface Lease {
  taskId: string;
  attempt: number;
  owner: string;
}

const ACTIVE = [...ACTIVE_STATUSES];

export interface TaskFilters {
  /** One status, or any of several (A2A's WORKING is planning or running). */
  status?: TaskStatus | TaskStatus[];
  owner?: string;
  sessionId?: string;
}

/** I/O for Tasks. Each multi-step operation is one statement or one transaction named after what it does. */
@Injectable()
export class TasksRepository {
  private readonly clock: SqlClock;
  private readonly hotPath: HotPathSql;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.clock = sqlClock(dataSource);
    this.hotPath = new HotPathSql(dataSource);
  }

  /** The agent_status / tasks/get lookup: on every poll of every client, hence plain SQL. */
  async findById(id: string): Promise<TaskEntity | null> {
    const [task] = await this.hotPath.select(TaskEntity, { id });
    return task ?? null;
  }

  list(filters: TaskFilters, limit: number, beforeSeq: number | null): Promise<TaskEntity[]> {
    const query = this.filtered(filters).orderBy('task.seq', 'DESC').limit(limit);
    if (beforeSeq !== null) query.andWhere('task.seq < :beforeSeq', { beforeSeq });
    return query.getMany();
  }

  /** How many Tasks match the filters (A2A ListTasks reports it beside each page). */
  count(filters: TaskFilters): Promise<number> {
    return this.filtered(filters).getCount();
  }

  private filtered(filters: TaskFilters) {
    const query = this.dataSource.getRepository(TaskEntity).createQueryBuilder('task');
    if (filters.status) query.andWhere('task.status IN (:...statuses)', { statuses: [filters.status].flat() });
    if (filters.owner) query.andWhere('task.owner = :owner', { owner: filters.owner });
    if (filters.sessionId) query.andWhere('task.session_id = :sessionId', { sessionId: filters.sessionId });
    return query;
  }

  /** For each queued Task of `tasks`, its place in the queue (1 runs next), by `seq` (FIFO). */
  async queuePositions(tasks: TaskEntity[]): Promise<Map<string, number>> {
    const queued = tasks.filter((task) => task.status === 'queued');
    if (queued.length === 0) return new Map();
    const rows = (await this.dataSource
      .getRepository(TaskEntity)
      .createQueryBuilder('task')
      .select('task.id', 'id')
      .addSelect((ahead) => ahead.select('COUNT(*)').from(TaskEntity, 'ahead').where("ahead.status = 'queued'").andWhere('ahead.seq <= task.seq'), 'position')
      .where('task.id IN (:...ids)', { ids: queued.map((task) => task.id) })
      .getRawMany()) as { id: string; position: number | string }[];
    return new Map(rows.map((row) => [row.id, Number(row.position)]));
  }

  async countByStatus(): Promise<Record<TaskStatus, number>> {
    const rows = (await this.hotPath.all('SELECT status, COUNT(*) AS n FROM tasks GROUP BY status')) as { status: TaskStatus; n: number | string }[];
    const counts = Object.fromEntries(TASK_STATUSES.map((status) => [status, 0])) as Record<TaskStatus, number>;
    for (const row of rows) counts[row.status] = Number(row.n);
    return counts;
  }

  /** A Task's images with their bytes, in submission order. */
  async imageData(taskId: string): Promise<{ mimeType: string; data: Buffer }[]> {
    const rows = (await this.hotPath.all('SELECT mime_type, data FROM task_images WHERE task_id = ? ORDER BY position', [taskId])) as { mime_type: string; data: Buffer }[];
    return rows.map((row) => ({ mimeType: row.mime_type, data: row.data }));
  }

  /** Completed earlier turns of a session, oldest first: the conversation sent back as context. */
  history(sessionId: string, beforeSeq: number): Promise<TaskEntity[]> {
    return this.dataSource.getRepository(TaskEntity).find({
      where: { sessionId, status: 'completed', seq: LessThan(beforeSeq) },
      order: { seq: 'ASC' },
    });
  }

  /** The turns a session started with (a Chat API client's earlier messages), oldest first. */
  async prelude(sessionId: string): Promise<ConversationTurn[]> {
    const [row] = (await this.hotPath.all('SELECT prelude FROM sessions WHERE id = ?', [sessionId])) as { prelude: string | null }[];
    return row?.prelude ? (JSON.parse(row.prelude) as ConversationTurn[]) : [];
  }

  imagesOf(taskIds: string[]): Promise<TaskImageEntity[]> {
    if (taskIds.length === 0) return Promise.resolve([]);
    return this.dataSource.getRepository(TaskImageEntity).find({
      where: { taskId: In(taskIds) },
      select: { taskId: true, position: true, mimeType: true, bytes: true, sha256: true },
    });
  }

  /**
   * Moves the oldest queued Task to `planning` under a new lease, in one statement (no read-then-write
   * transaction, whose stale snapshot SQLite would refuse to upgrade). The partial unique index allows
   * one active Task, so while another one is active, in any process or replica, nothing is claimed.
   */
  async claimNext(owner: string, leaseMs: number): Promise<TaskEntity | null> {
    try {
      const claimed = await this.dataSource
        .createQueryBuilder()
        .update(TaskEntity)
        .set({
          status: 'planning',
          attempt: () => 'attempt + 1',
          leaseOwner: owner,
          leaseExpiresAt: () => this.clock.nowPlus(leaseMs),
          startedAt: () => this.clock.now(),
          updatedAt: () => this.clock.now(),
        })
        .where("status = 'queued'")
        .andWhere("seq = (SELECT MIN(t.seq) FROM tasks t WHERE t.status = 'queued')")
        .execute();
      if (!claimed.affected) return null;
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
    // The claim succeeded, so the one active Task is ours until we end it or lose the lease.
    return this.dataSource.getRepository(TaskEntity).findOneBy({ status: In(ACTIVE), leaseOwner: owner });
  }

  /** Renews the lease; false when it is no longer ours (reclaimed after a stall): the runner must stop. */
  async renew(lease: Lease, leaseMs: number): Promise<{ held: boolean; cancelRequested: boolean }> {
    const renewed = await this.fenced(lease).set({ leaseExpiresAt: () => this.clock.nowPlus(leaseMs) }).execute();
    if (!renewed.affected) return { held: false, cancelRequested: false };
    const row = await this.dataSource
      .getRepository(TaskEntity)
      .findOne({ where: { id: lease.taskId }, select: { seq: true, cancelRequested: true } });
    return { held: true, cancelRequested: row?.cancelRequested ?? false };
  }

  async updateProgress(lease: Lease, progress: TaskProgress): Promise<boolean> {
    const outcome = await this.fenced(lease).set({ ...progress, updatedAt: nowIso() }).execute();
    return (outcome.affected ?? 0) > 0;
  }

  /** Ends the leased Task; false when the lease was lost (another attempt owns the Task now). */
  async finish(lease: Lease, status: TaskStatus, result: string, progress: TaskProgress = {}): Promise<boolean> {
    const at = nowIso();
    const outcome = await this.fenced(lease)
      .set({ ...progress, status, result, currentTask: '', leaseOwner: null, leaseExpiresAt: null, updatedAt: at, finishedAt: at })
      .execute();
    return (outcome.affected ?? 0) > 0;
  }

  /** Cancels a queued Task at once; returns false when it was not queued. */
  async cancelQueued(id: string, reason: string): Promise<boolean> {
    const at = nowIso();
    const outcome = await this.dataSource
      .getRepository(TaskEntity)
      .update({ id, status: 'queued' }, { status: 'cancelled', result: reason, updatedAt: at, finishedAt: at });
    return (outcome.affected ?? 0) > 0;
  }

  /** Flags an active Task for cancellation; its runner, in whichever process, sees it at its next renewal. */
  async requestCancel(id: string): Promise<boolean> {
    const outcome = await this.dataSource
      .getRepository(TaskEntity)
      .update({ id, status: In(ACTIVE) }, { cancelRequested: true, updatedAt: nowIso() });
    return (outcome.affected ?? 0) > 0;
  }

  /** Active Tasks whose lease has lapsed by database time, or whose owner is known to be dead. */
  async abandoned(deadOwner: (owner: string) => boolean): Promise<TaskEntity[]> {
    const active = await this.dataSource
      .getRepository(TaskEntity)
      .createQueryBuilder('task')
      .addSelect(`CASE WHEN task.lease_expires_at < ${this.clock.now()} THEN 1 ELSE 0 END`, 'expired')
      .where('task.status IN (:...active)', { active: ACTIVE })
      .getRawAndEntities();
    return active.entities.filter(
      (task, index) => Number(active.raw[index].expired) === 1 || task.leaseOwner === null || deadOwner(task.leaseOwner),
    );
  }

  /**
   * Takes an abandoned Task back from its previous attempt: to `queued` (nothing irreversible can
   * have happened while planning) or to `failed` with the reason. Fenced, so a runner that renewed in
   * the meantime keeps its Task.
   */
  async reclaim(task: TaskEntity, to: 'queued' | 'failed', reason: string): Promise<boolean> {
    const at = nowIso();
    const fields =
      to === 'queued'
        ? { status: 'queued' as const, leaseOwner: null, leaseExpiresAt: null, currentTask: '', updatedAt: at }
        : { status: 'failed' as const, result: reason, leaseOwner: null, leaseExpiresAt: null, currentTask: '', updatedAt: at, finishedAt: at };
    const outcome = await this.fenced({ taskId: task.id, attempt: task.attempt, owner: task.leaseOwner ?? '' }, task.leaseOwner === null)
      .set(fields)
      .execute();
    return (outcome.affected ?? 0) > 0;
  }

  private fenced(lease: Lease, ownerIsNull = false) {
    const query = this.dataSource
      .createQueryBuilder()
      .update(TaskEntity)
      .where('id = :id', { id: lease.taskId })
      .andWhere('attempt = :attempt', { attempt: lease.attempt })
      .andWhere('status IN (:...active)', { active: ACTIVE });
    return ownerIsNull ? query.andWhere('lease_owner IS NULL') : query.andWhere('lease_owner = :owner', { owner: lease.owner });
  }
}

function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const code = (error.driverError as { code?: string } | undefined)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}
