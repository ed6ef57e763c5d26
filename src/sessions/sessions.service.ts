import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
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

  /** A new session row, committed by the caller together with its first Task. */
  create(owner: string): SessionEntity {
    const session = new SessionEntity();
    session.id = randomUUID();
    session.owner = owner;
    session.createdAt = nowIso();
    return session;
  }
}
