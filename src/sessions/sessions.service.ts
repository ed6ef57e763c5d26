import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { ConversationTurn } from '../agent/agent-runner.js';
import { nowIso } from '../common/clock.js';
import { SessionEntity } from './session.entity.js';

/** Agent conversations, each owned by the user who started it. */
@Injectable()
export class SessionsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Another user's session is indistinguishable from a missing one. */
  async findOwned(id: string, owner: string): Promise<SessionEntity | null> {
    const session = await this.dataSource.getRepository(SessionEntity).findOneBy({ id });
    return session && session.owner === owner ? session : null;
  }

  /** Admin view: any session. */
  find(id: string): Promise<SessionEntity | null> {
    return this.dataSource.getRepository(SessionEntity).findOneBy({ id });
  }

  /**
   * A new session row, committed by the caller together with its first Task; `prelude` is the
   * conversation the client brought along (earlier Chat API messages), sent as context before its Tasks.
   */
  create(owner: string, prelude: ConversationTurn[] = []): SessionEntity {
    const session = new SessionEntity();
    session.id = randomUUID();
    session.owner = owner;
    session.createdAt = nowIso();
    session.prelude = prelude.length > 0 ? JSON.stringify(prelude) : null;
    return session;
  }
}
