import type { SqlStep } from '../../../src/database/plain-sql.js';
import type { SessionEntity } from '../../../src/sessions/session.entity.js';
import type { SessionsRepository } from '../../../src/sessions/sessions.repository.js';
import { memoryStep, type MemoryStore } from './memory-unit-of-work.js';

/** The `sessions` table in memory, for a real SessionsService. */
export class MemorySessionsRepository implements Pick<SessionsRepository, 'find' | 'prelude' | 'insertion'>, MemoryStore {
  rows: SessionEntity[] = [];

  async find(id: string): Promise<SessionEntity | null> {
    return this.rows.find((row) => row.id === id) ?? null;
  }

  async prelude(id: string): Promise<string | null> {
    return (await this.find(id))?.prelude ?? null;
  }

  insertion(session: SessionEntity): SqlStep {
    return memoryStep(() => {
      if (this.rows.some((row) => row.id === session.id)) throw new Error(`duplicate session ${session.id}`);
      this.rows.push(session);
    });
  }

  snapshot(): () => void {
    const rows = [...this.rows];
    return () => void (this.rows = rows);
  }
}
