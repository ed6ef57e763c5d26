import { Injectable } from '@nestjs/common';
import { PlainSql, sqlStep, type SqlStep } from '../database/plain-sql.js';
import { SessionEntity } from './session.entity.js';

/** I/O for the `sessions` table. */
@Injectable()
export class SessionsRepository {
  constructor(private readonly sql: PlainSql) {}

  async find(id: string): Promise<SessionEntity | null> {
    const [session] = await this.sql.select(SessionEntity, { id });
    return session ?? null;
  }

  /** The prelude column as stored (JSON text), or null. */
  async prelude(id: string): Promise<string | null> {
    const [row] = await this.sql.all<{ prelude: string | null }>('SELECT prelude FROM sessions WHERE id = ?', [id]);
    return row?.prelude ?? null;
  }

  /** The insert of a new session, for the unit of work of its first Task. */
  insertion(session: SessionEntity): SqlStep {
    return sqlStep.insert(SessionEntity, [session]);
  }
}
