import { Injectable } from '@nestjs/common';
import { PlainSql } from '../database/plain-sql.js';
import type { UnattendedOwner } from './unattended.js';

/**
 * Who a schedule or trigger runs as at the time of its fire or delivery (ADR 0039): the service learns
 * a user's groups only from the requests they make (the proxy's header, the token's claim), so the
 * owner runs with the groups they presented most recently: with their latest Task sent in person (not
 * by a schedule or trigger) that started after the schedule or trigger was made, else with the groups
 * they had when they made it. A group the identity provider took away is gone from the next fire after
 * the owner's next request; one it added comes the same way.
 */
@Injectable()
export class UnattendedOwnersRepository {
  constructor(private readonly sql: PlainSql) {}

  async current(owner: UnattendedOwner, madeAt: string): Promise<UnattendedOwner> {
    // The index (owner, started_at) finds it from the newest end; Tasks still queued have told nothing yet.
    const [latest] = await this.sql.all<{ groups: string; email: string | null }>(
      `SELECT owner_groups AS groups, owner_email AS email FROM tasks
        WHERE owner = ? AND started_at IS NOT NULL AND started_at > ? AND created_at > ? AND surface NOT IN ('schedule', 'trigger')
        ORDER BY started_at DESC LIMIT 1`,
      [owner.user, madeAt, madeAt],
    );
    return latest ? { user: owner.user, groups: JSON.parse(latest.groups) as string[], email: latest.email ?? owner.email } : owner;
  }
}
