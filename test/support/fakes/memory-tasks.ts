import type { TaskProgress } from '../../../src/agent/agent-runner.js';
import type { SqlStep } from '../../../src/database/plain-sql.js';
import { TaskEntity } from '../../../src/queue/task.entity.js';
import type { TaskImageEntity } from '../../../src/queue/task-image.entity.js';
import { ACTIVE_STATUSES, TASK_STATUSES, type TaskStatus } from '../../../src/queue/task-status.js';
import type { FinishedTask, Lease, TaskFilters, TaskOutcome, TasksRepository } from '../../../src/queue/tasks.repository.js';
import { ManualClock } from '../manual-clock.js';
import { memoryStep, type MemoryStore } from './memory-unit-of-work.js';

type Fence = Omit<Lease, 'owner'> & { owner: string | null };

/** The filters this fake answers; another one fails the spec rather than being ignored. */
const FILTERS = new Set(['status', 'owner', 'sessionId']);

/**
 * The `tasks` and `task_images` tables in memory, answering as TasksRepository does on SQLite and PostgreSQL (the
 * medium specs fair-queue.spec.ts and one-active-task.spec.ts run their cases on this fake too, so the two cannot
 * drift apart): the fair claim order, one active Task (the partial unique index), writes fenced by the lease, and
 * database time from `clock`. Rows are replaced, never changed in place, so a snapshot is a copy of the list.
 * `correctionCount` is left out: SteerInboxRepository's guard reads its rows, which MemoryUnitOfWork does not give
 * (the intake harness fakes it).
 */
export class MemoryTasks implements Omit<TasksRepository, 'sql' | 'correctionCount'>, MemoryStore {
  rows: TaskEntity[] = [];
  images: TaskImageEntity[] = [];
  private seq = 0;

  constructor(readonly clock = new ManualClock()) {}

  snapshot(): () => void {
    const [rows, images, seq] = [[...this.rows], [...this.images], this.seq];
    return () => void ([this.rows, this.images, this.seq] = [rows, images, seq]);
  }

  async findById(id: string): Promise<TaskEntity | null> {
    return this.rows.find((row) => row.id === id) ?? null;
  }

  insertion(task: TaskEntity, images: TaskImageEntity[]): SqlStep[] {
    return [
      memoryStep(() => {
        if (this.rows.some((row) => row.id === task.id)) throw new Error(`duplicate task ${task.id}`);
        this.rows.push(Object.assign(new TaskEntity(), task, { seq: ++this.seq }));
      }),
      memoryStep(() => this.images.push(...images)),
    ];
  }

  async list(filters: TaskFilters, limit: number, beforeSeq: number | null): Promise<TaskEntity[]> {
    return this.matching(filters)
      .filter((row) => beforeSeq === null || row.seq < beforeSeq)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, limit);
  }

  async count(filters: TaskFilters): Promise<number> {
    return this.matching(filters).length;
  }

  async countByStatus(): Promise<Record<TaskStatus, number>> {
    return Object.fromEntries(TASK_STATUSES.map((status) => [status, this.rows.filter((row) => row.status === status).length])) as Record<TaskStatus, number>;
  }

  /** Told by playing the claims forward (each owner's next start is later than every start before it). */
  async queuePositions(tasks: readonly Pick<TaskEntity, 'id' | 'status'>[]): Promise<Map<string, number>> {
    const lastStart = new Map(this.owners().map((owner) => [owner, this.lastStart(owner)]));
    const queued = this.queued();
    const positions = new Map<string, number>();
    for (let position = 1, tick = 0; queued.length > 0; position++, tick++) {
      const next = fairest(queued, (owner) => lastStart.get(owner) ?? null);
      queued.splice(queued.indexOf(next), 1);
      lastStart.set(next.owner, `~${String(tick).padStart(9, '0')}`); // after every real ISO time
      positions.set(next.id, position);
    }
    const wanted = new Set(tasks.filter((task) => task.status === 'queued').map((task) => task.id));
    return new Map([...positions].filter(([id]) => wanted.has(id)));
  }

  queuedLimit(owner: string, limit: number, refuse: (queued: number) => Error): { before: SqlStep[]; after: SqlStep[] } {
    const check = memoryStep(() => {
      const queued = this.rows.filter((row) => row.owner === owner && row.status === 'queued').length;
      if (queued > limit) throw refuse(queued - 1);
    });
    return { before: [], after: [check] };
  }

  async imageData(taskId: string): Promise<{ mimeType: string; data: Buffer }[]> {
    return this.imagesOfTask(taskId).map((image) => ({ mimeType: image.mimeType, data: image.data }));
  }

  async history(sessionId: string, beforeSeq: number): Promise<TaskEntity[]> {
    return this.rows.filter((row) => row.sessionId === sessionId && row.status === 'completed' && row.seq < beforeSeq).sort((a, b) => a.seq - b.seq);
  }

  async imagesOf(taskIds: string[]): Promise<TaskImageEntity[]> {
    return this.images.filter((image) => taskIds.includes(image.taskId));
  }

  async claimNext(owner: string, leaseMs: number): Promise<TaskEntity | null> {
    if (this.rows.some((row) => ACTIVE_STATUSES.includes(row.status))) return null;
    const queued = this.queued();
    if (queued.length === 0) return null;
    const next = fairest(queued, (candidate) => this.lastStart(candidate));
    const now = this.now();
    return this.replace(next, {
      status: 'planning',
      attempt: next.attempt + 1,
      leaseOwner: owner,
      leaseExpiresAt: this.now(leaseMs),
      startedAt: now,
      updatedAt: now,
    });
  }

  async renew(lease: Lease, leaseMs: number): Promise<{ held: boolean; cancelRequested: boolean }> {
    const row = this.fenced(lease);
    if (!row) return { held: false, cancelRequested: false };
    return { held: true, cancelRequested: this.replace(row, { leaseExpiresAt: this.now(leaseMs) }).cancelRequested };
  }

  async updateProgress(lease: Lease, progress: TaskProgress): Promise<boolean> {
    return this.fencedSet(lease, { ...progress, updatedAt: this.now() });
  }

  async finish(lease: Lease, status: TaskStatus, result: string, progress: TaskProgress = {}): Promise<FinishedTask | null> {
    const at = this.now();
    if (!this.fencedSet(lease, { ...progress, status, result, currentTask: '', leaseOwner: null, leaseExpiresAt: null, updatedAt: at, finishedAt: at })) return null;
    const row = this.rows.find((candidate) => candidate.id === lease.taskId)!;
    return { owner: row.owner, inputTokens: row.inputTokens, outputTokens: row.outputTokens };
  }

  async presentedSince(user: string, since: string): Promise<{ groups: string[]; email: string | null } | null> {
    const [latest] = this.rows
      .filter((row) => row.owner === user && row.startedAt !== null && row.startedAt > since && row.createdAt > since && !['schedule', 'trigger'].includes(row.surface ?? ''))
      .sort((a, b) => (b.startedAt! < a.startedAt! ? -1 : 1));
    return latest ? { groups: JSON.parse(latest.ownerGroups) as string[], email: latest.ownerEmail } : null;
  }

  async closeSteering(taskId: string, received: number): Promise<boolean> {
    const row = this.rows.find((candidate) => candidate.id === taskId && candidate.steerCount <= received);
    if (row) this.replace(row, { steeringClosed: true });
    return row !== undefined;
  }

  async newestOfSession(sessionId: string): Promise<string | null> {
    const [newest] = this.rows.filter((row) => row.sessionId === sessionId).sort((a, b) => b.seq - a.seq);
    return newest?.id ?? null;
  }

  async activeOf(owner: string): Promise<string[]> {
    return this.rows.filter((row) => row.owner === owner && ['queued', 'planning', 'running'].includes(row.status)).map((row) => row.id);
  }

  async outcomes(taskIds: readonly string[], resultChars: number): Promise<Map<string, TaskOutcome>> {
    return new Map(
      this.rows.filter((row) => taskIds.includes(row.id)).map((row) => [row.id, { status: row.status, result: row.result === null ? null : row.result.slice(0, resultChars) }]),
    );
  }

  async cancelQueued(id: string, reason: string): Promise<boolean> {
    const row = this.rows.find((candidate) => candidate.id === id && candidate.status === 'queued');
    if (!row) return false;
    const at = this.now();
    this.replace(row, { status: 'cancelled', result: reason, updatedAt: at, finishedAt: at });
    return true;
  }

  async requestCancel(id: string): Promise<boolean> {
    const row = this.rows.find((candidate) => candidate.id === id && ACTIVE_STATUSES.includes(candidate.status));
    if (!row) return false;
    this.replace(row, { cancelRequested: true, updatedAt: this.now() });
    return true;
  }

  async abandoned(deadOwner: (owner: string) => boolean): Promise<TaskEntity[]> {
    const now = this.now();
    return this.rows.filter(
      (row) => ACTIVE_STATUSES.includes(row.status) && ((row.leaseExpiresAt !== null && row.leaseExpiresAt < now) || row.leaseOwner === null || deadOwner(row.leaseOwner)),
    );
  }

  async reclaim(task: TaskEntity, to: 'queued' | 'failed', reason: string): Promise<boolean> {
    const at = this.now();
    const fields: Partial<TaskEntity> =
      to === 'queued'
        ? { status: 'queued', leaseOwner: null, leaseExpiresAt: null, currentTask: '', updatedAt: at }
        : { status: 'failed', result: reason, leaseOwner: null, leaseExpiresAt: null, currentTask: '', updatedAt: at, finishedAt: at };
    return this.fencedSet({ taskId: task.id, attempt: task.attempt, owner: task.leaseOwner }, fields);
  }

  private matching(filters: TaskFilters): TaskEntity[] {
    const unknown = Object.keys(filters).filter((key) => !FILTERS.has(key) && filters[key as keyof TaskFilters] !== undefined);
    if (unknown.length > 0) throw new Error(`MemoryTasks: filters not kept in memory: ${unknown.join(', ')}`);
    const statuses = filters.status === undefined ? null : [filters.status].flat();
    return this.rows.filter(
      (row) => (!statuses || statuses.includes(row.status)) && (!filters.owner || row.owner === filters.owner) && (!filters.sessionId || row.sessionId === filters.sessionId),
    );
  }

  private queued(): TaskEntity[] {
    return this.rows.filter((row) => row.status === 'queued').sort((a, b) => a.seq - b.seq);
  }

  private owners(): string[] {
    return [...new Set(this.rows.map((row) => row.owner))];
  }

  private lastStart(owner: string): string | null {
    const starts = this.rows.filter((row) => row.owner === owner && row.startedAt !== null).map((row) => row.startedAt!);
    return starts.length === 0 ? null : starts.sort().at(-1)!;
  }

  private fenced(lease: Fence): TaskEntity | undefined {
    return this.rows.find((row) => row.id === lease.taskId && row.attempt === lease.attempt && ACTIVE_STATUSES.includes(row.status) && row.leaseOwner === lease.owner);
  }

  private fencedSet(lease: Fence, fields: Partial<TaskEntity>): boolean {
    const row = this.fenced(lease);
    if (row) this.replace(row, fields);
    return row !== undefined;
  }

  private replace(row: TaskEntity, fields: Partial<TaskEntity>): TaskEntity {
    const next = Object.assign(new TaskEntity(), row, fields);
    this.rows[this.rows.indexOf(row)] = next;
    return next;
  }

  private imagesOfTask(taskId: string): TaskImageEntity[] {
    return this.images.filter((image) => image.taskId === taskId).sort((a, b) => a.position - b.position);
  }

  /** Database time, as ISO text (plus `ms`). */
  private now(ms = 0): string {
    return new Date(this.clock.now() + ms).toISOString();
  }
}

/** claimNext's order: the owner whose last Task started longest ago (never: first), then the oldest Task. */
function fairest(queued: TaskEntity[], lastStart: (owner: string) => string | null): TaskEntity {
  const key = (row: TaskEntity) => lastStart(row.owner);
  return [...queued].sort((a, b) => {
    const [ka, kb] = [key(a), key(b)];
    if (ka !== kb) return ka === null ? -1 : kb === null ? 1 : ka.localeCompare(kb);
    return a.seq - b.seq;
  })[0];
}
