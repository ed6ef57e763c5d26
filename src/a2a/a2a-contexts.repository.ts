import { Injectable } from '@nestjs/common';
import { nowIso } from '../common/clock.js';
import { PlainSql, sqlStep, type SqlStep } from '../database/plain-sql.js';

/** `a2a_contexts`: the contextIds clients made up, each its owner's name for one session. */
@Injectable()
export class A2aContextsRepository {
  constructor(private readonly sql: PlainSql) {}

  async sessionOf(owner: string, contextId: string): Promise<string | null> {
    const [row] = await this.sql.all<{ session_id: string }>('SELECT session_id FROM a2a_contexts WHERE owner = ? AND context_id = ?', [owner, contextId]);
    return row?.session_id ?? null;
  }

  /** The names of those of the sessions that have one. */
  async namesOf(sessionIds: readonly string[]): Promise<Map<string, string>> {
    const ids = [...new Set(sessionIds)];
    if (ids.length === 0) return new Map();
    const rows = await this.sql.all<{ session_id: string; context_id: string }>(
      `SELECT session_id, context_id FROM a2a_contexts WHERE session_id IN (${ids.map(() => '?').join(', ')})`,
      ids,
    );
    return new Map(rows.map((row) => [row.session_id, row.context_id]));
  }

  /** A guard for the naming unit of work: `taken()` is thrown, rolling it back, when the name exists by the time it commits. */
  unclaimed(owner: string, contextId: string, taken: () => Error): SqlStep {
    const check = (rows: unknown[]) => {
      if (rows.length > 0) throw taken();
    };
    return { op: 'all', sql: 'SELECT 1 FROM a2a_contexts WHERE owner = ? AND context_id = ?', params: [owner, contextId], check };
  }

  /** The insert of a name, for the unit of work that creates its session (a name taken meanwhile fails it on the key). */
  insertion(owner: string, contextId: string, sessionId: string): SqlStep {
    return sqlStep.run('INSERT INTO a2a_contexts (owner, context_id, session_id, created_at) VALUES (?, ?, ?, ?)', [owner, contextId, sessionId, nowIso()]);
  }
}
