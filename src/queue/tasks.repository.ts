import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, LessThan, QueryFailedError } from 'typeorm';
import { AuditEventEntity } from '../audit/audit-event.entity.js';
import { nowIso } from '../common/clock.js';
import { SessionEntity } from '../sessions/session.entity.js';
import { TaskImageEntity } from './task-image.entity.js';
import { ACTIVE_STATUSES, type TaskStatus } from './task-status.js';
import { TaskEntity } from './task.entity.js';

/** Progress fields the agent may write while a Task is active. */
export type TaskProgress = Partial<
  Pick<TaskEntity, 'status' | 'completedSubtasks' | 'totalSubtasks' | 'currentTask' | 'inputTokens' | 'outputTokens' | 'criticalPathTokens'>
>;

export interface NewTask {
  newSession: SessionEntity | null;
  task: TaskEntity;
  images: TaskImageEntity[];
  audit: AuditEventEntity;
}

/** I/O for Tasks. Each multi-step operation is one transaction named after what it does. */
@Injectable()
export class TasksRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Session (when new), Task, its images and the accepting audit event commit together or not at all. */
  async enqueue({ newSession, task, images, audit }: NewTask): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      if (newSession) await manager.insert(SessionEntity, newSession);
      await manager.insert(TaskEntity, task);
      for (const image of images) await manager.insert(TaskImageEntity, image);
      await manager.insert(AuditEventEntity, audit);
    });
  }

  findById(id: string): Promise<TaskEntity | null> {
    return this.dataSource.getRepository(TaskEntity).findOneBy({ id });
  }

  images(taskId: string): Promise<TaskImageEntity[]> {
    return this.dataSource.getRepository(TaskImageEntity).find({ where: { taskId }, order: { position: 'ASC' } });
  }

  /** Completed earlier turns of a session, oldest first: the conversation sent back as context. */
  history(sessionId: string, beforeSeq: number): Promise<TaskEntity[]> {
    return this.dataSource.getRepository(TaskEntity).find({
      where: { sessionId, status: 'completed', seq: LessThan(beforeSeq) },
      order: { seq: 'ASC' },
    });
  }

  imagesOf(taskIds: string[]): Promise<TaskImageEntity[]> {
    if (taskIds.length === 0) return Promise.resolve([]);
    return this.dataSource.getRepository(TaskImageEntity).find({
      where: { taskId: In(taskIds) },
      select: { taskId: true, position: true, mimeType: true, bytes: true, sha256: true },
    });
  }

  /**
   * Moves the oldest queued Task to `planning` in one statement (no read-then-write transaction, whose
   * stale snapshot SQLite would refuse to upgrade). The partial unique index allows one active Task,
   * so while another one is active, in this process or another, the update fails and nothing is claimed.
   */
  async claimNext(): Promise<TaskEntity | null> {
    const at = nowIso();
    try {
      const claimed = await this.dataSource
        .createQueryBuilder()
        .update(TaskEntity)
        .set({ status: 'planning', startedAt: at, updatedAt: at })
        .where("status = 'queued'")
        .andWhere("seq = (SELECT MIN(t.seq) FROM tasks t WHERE t.status = 'queued')")
        .execute();
      if (!claimed.affected) return null;
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
    // The claim succeeded, so the one active Task is ours until we end it.
    return this.dataSource.getRepository(TaskEntity).findOneBy({ status: 'planning', startedAt: at });
  }

  async updateProgress(id: string, progress: TaskProgress): Promise<void> {
    await this.dataSource
      .getRepository(TaskEntity)
      .update({ id, status: In([...ACTIVE_STATUSES]) }, { ...progress, updatedAt: nowIso() });
  }

  /** Ends an active Task; returns false when it was no longer active (so the caller writes nothing else). */
  async finish(id: string, status: TaskStatus, result: string, progress: TaskProgress = {}): Promise<boolean> {
    const at = nowIso();
    const outcome = await this.dataSource
      .getRepository(TaskEntity)
      .update(
        { id, status: In([...ACTIVE_STATUSES]) },
        { ...progress, status, result, currentTask: '', updatedAt: at, finishedAt: at },
      );
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

  /** Flags an active Task for cancellation; its runner (in any process) sees the flag. */
  async requestCancel(id: string): Promise<boolean> {
    const outcome = await this.dataSource
      .getRepository(TaskEntity)
      .update({ id, status: In([...ACTIVE_STATUSES]) }, { cancelRequested: true, updatedAt: nowIso() });
    return (outcome.affected ?? 0) > 0;
  }

  async isCancelRequested(id: string): Promise<boolean> {
    const row = await this.dataSource
      .getRepository(TaskEntity)
      .findOne({ where: { id }, select: { seq: true, cancelRequested: true } });
    return row?.cancelRequested ?? false;
  }

  /** Tasks left active by a process that died; each is marked failed, and those this call ended are returned. */
  async failInterrupted(reason: string): Promise<TaskEntity[]> {
    const stuck = await this.dataSource.getRepository(TaskEntity).findBy({ status: In([...ACTIVE_STATUSES]) });
    const ended: TaskEntity[] = [];
    for (const task of stuck) {
      if (await this.finish(task.id, 'failed', reason)) ended.push(task);
    }
    return ended;
  }
}

function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const code = (error.driverError as { code?: string } | undefined)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}
