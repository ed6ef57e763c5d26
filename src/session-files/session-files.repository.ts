import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { TaskStepEntity } from '../agent/task-step.entity.js';
import { TaskEntity } from '../queue/task.entity.js';

/** One file a Task created or changed, as the trace knows it: its session, path and latest step. */
export interface ChangedFile {
  sessionId: string;
  path: string;
  /** The step that last changed it: the keyset of the newest-first order. */
  seq: number;
}

/** Reads, from the execution trace, which files the Tasks of a user or a session created or changed. */
@Injectable()
export class SessionFilesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Newest change first, one row per (session, path), only changes older than `before` (a keyset). */
  async changedFiles(scope: { owner: string } | { sessionId: string }, limit: number, before: number | null): Promise<ChangedFile[]> {
    // file_op steps carry the path in their JSON detail; both databases can read it in SQL. PostgreSQL's
    // JSON functions refuse an escaped NUL anywhere in the document (older steps may hold one in their
    // argument summary): such a row gives no path instead of failing the whole listing.
    const path =
      this.dataSource.options.type === 'postgres'
        ? "(CASE WHEN strpos(step.detail, '\\u0000') = 0 THEN CAST(step.detail AS json) ->> 'path' END)"
        : "json_extract(step.detail, '$.path')";
    const query = this.dataSource
      .createQueryBuilder()
      .select('task.session_id', 'session_id')
      .addSelect(path, 'path')
      .addSelect('MAX(step.seq)', 'seq')
      .from(TaskStepEntity, 'step')
      .innerJoin(TaskEntity, 'task', 'task.id = step.task_id')
      .where("step.kind = 'file_op'")
      .andWhere('owner' in scope ? 'task.owner = :owner' : 'task.session_id = :sessionId', scope)
      .groupBy('task.session_id')
      .addGroupBy(path)
      .orderBy('MAX(step.seq)', 'DESC')
      .limit(limit);
    if (before !== null) query.having('MAX(step.seq) < :before', { before });
    const rows = await query.getRawMany<{ session_id: string; path: string | null; seq: number | string }>();
    return rows.map((row) => ({ sessionId: row.session_id, path: row.path ?? '', seq: Number(row.seq) }));
  }
}
