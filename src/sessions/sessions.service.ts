import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { nowIso } from '../common/clock.js';
import type { SqlStep } from '../database/plain-sql.js';
import type { ConversationTurn } from './conversation-turn.js';
import { SessionEntity } from './session.entity.js';
import { SessionsRepository } from './sessions.repository.js';

/** Agent conversations, each owned by the user who started it. */
@Injectable()
export class SessionsService {
  constructor(private readonly sessions: SessionsRepository) {}

  /** Another user's session is indistinguishable from a missing one. */
  async findOwned(id: string, owner: string): Promise<SessionEntity | null> {
    const session = await this.sessions.find(id);
    return session && session.owner === owner ? session : null;
  }

  /** Admin view: any session. */
  find(id: string): Promise<SessionEntity | null> {
    return this.sessions.find(id);
  }

  /** The turns a session started with (a Chat API client's earlier messages), oldest first. */
  async prelude(id: string): Promise<ConversationTurn[]> {
    const prelude = await this.sessions.prelude(id);
    return prelude ? (JSON.parse(prelude) as ConversationTurn[]) : [];
  }

  /**
   * A new session and its insert, committed by the caller in the unit of work of its first Task;
   * `prelude` is the conversation the client brought along (earlier Chat API messages), sent as
   * context before its Tasks.
   */
  create(owner: string, prelude: ConversationTurn[] = [], id: string = randomUUID()): { session: SessionEntity; insertion: SqlStep } {
    const session = new SessionEntity();
    session.id = id;
    session.owner = owner;
    session.createdAt = nowIso();
    session.prelude = prelude.length > 0 ? JSON.stringify(prelude) : null;
    return { session, insertion: this.sessions.insertion(session) };
  }
}
