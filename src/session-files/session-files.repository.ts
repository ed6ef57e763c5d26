import { Injectable } from '@nestjs/common';
import { PlainSql } from '../database/plain-sql.js';

/** One file a Task created or changed: its session, path and latest change. */
export interface ChangedFile {
  sessionId: string;
  path: string;
  /** The change that last touched it (task_file_changes.seq): the keyset of the newest-first order. */
  seq: number;
}

/** Reads, from the table of file changes (task_file_changes), which files the Tasks of a user or a session created or changed. */
@Injectable()
export class SessionFilesRepository {
  constructor(private readonly sql: PlainSql) {}

  /**
   * Newest change first, one row per (session, path), only files whose newest change is older than
   * `before` (a keyset). It walks the scope's changes down from `before` on (owner, seq) or
   * (session_id, seq) and keeps a change only when (session_id, path, seq) holds no later one, so a page
   * costs its own rows and the superseded changes between them, never the whole history. A session's
   * Tasks are all its owner's (a Task joins only a session its caller owns), so a later change of the
   * same session and path is the same owner's.
   */
  async changedFiles(scope: { owner: string } | { sessionId: string }, limit: number, before: number | null): Promise<ChangedFile[]> {
    const [condition, value] = 'owner' in scope ? ['change.owner = ?', scope.owner] : ['change.session_id = ?', scope.sessionId];
    const rows = await this.sql.all<{ session_id: string; path: string; seq: number | string }>(
      `SELECT change.session_id AS session_id, change.path AS path, change.seq AS seq FROM task_file_changes change ` +
        `WHERE ${condition}${before === null ? '' : ' AND change.seq < ?'} ` +
        'AND NOT EXISTS (SELECT 1 FROM task_file_changes later WHERE later.session_id = change.session_id AND later.path = change.path AND later.seq > change.seq) ' +
        'ORDER BY change.seq DESC LIMIT ?',
      [value, ...(before === null ? [] : [before]), limit],
    );
    return rows.map((row) => ({ sessionId: row.session_id, path: row.path, seq: Number(row.seq) }));
  }
}
