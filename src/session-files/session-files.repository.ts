import { Injectable } from '@nestjs/common';
import { PlainSql } from '../database/plain-sql.js';

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
  constructor(private readonly sql: PlainSql) {}

  /** Newest change first, one row per (session, path), only changes older than `before` (a keyset). */
  async changedFiles(scope: { owner: string } | { sessionId: string }, limit: number, before: number | null): Promise<ChangedFile[]> {
    // file_op steps carry the path in their JSON detail; both databases can read it in SQL. PostgreSQL's
    // JSON functions refuse an escaped NUL anywhere in the document (older steps may hold one in their
    // argument summary): such a row gives no path instead of failing the whole listing.
    const path =
      this.sql.dialect === 'postgres' ? "(CASE WHEN strpos(step.detail, '\\u0000') = 0 THEN CAST(step.detail AS json) ->> 'path' END)" : "json_extract(step.detail, '$.path')";
    const [condition, value] = 'owner' in scope ? ['task.owner = ?', scope.owner] : ['task.session_id = ?', scope.sessionId];
    const rows = await this.sql.all<{ session_id: string; path: string | null; seq: number | string }>(
      `SELECT task.session_id AS session_id, ${path} AS path, MAX(step.seq) AS seq FROM task_steps step INNER JOIN tasks task ON task.id = step.task_id ` +
        `WHERE step.kind = 'file_op' AND ${condition} GROUP BY task.session_id, ${path} ${before === null ? '' : 'HAVING MAX(step.seq) < ? '}` +
        'ORDER BY MAX(step.seq) DESC LIMIT ?',
      [value, ...(before === null ? [] : [before]), limit],
    );
    return rows.map((row) => ({ sessionId: row.session_id, path: row.path ?? '', seq: Number(row.seq) }));
  }
}
