import { describe, expect, it } from '@jest/globals';
import { validateConfig } from '../../src/config/agent-config.js';
import { withMigratedDatabase } from '../../src/database/data-source-options.js';
import type { PlainSql } from '../../src/database/plain-sql.js';
import { TasksRepository } from '../../src/queue/tasks.repository.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

const MADE_AT = '2026-12-06T09:00:00.000Z';
const stored = { user: 'alice@example.com', groups: ['dev'], email: 'alice@example.com' };

let next = 0;
/** A Task of `owner` as the queue stores it: the groups and surface of the request that made it. */
async function task(sql: PlainSql, fields: { owner?: string; groups: string[]; surface: string; createdAt: string; startedAt: string | null }) {
  const n = String(++next).padStart(12, '0');
  const session = `5e550000-0000-4000-8000-${n}`;
  const owner = fields.owner ?? stored.user;
  await sql.run('INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)', [session, owner, fields.createdAt]);
  await sql.run(
    "INSERT INTO tasks (id, session_id, owner, owner_groups, request, status, surface, created_at, updated_at, started_at) VALUES (?, ?, ?, ?, 'r', 'completed', ?, ?, ?, ?)",
    [`7a550000-0000-4000-8000-${n}`, session, owner, JSON.stringify(fields.groups), fields.surface, fields.createdAt, fields.createdAt, fields.startedAt],
  );
}

describe.each<DatabaseKind>(['sqlite', 'postgres'])('the groups an unattended Task runs with (%s)', (kind) => {
  it('are those of the owner’s latest Task sent in person since the schedule was made, else those it was made with', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      const tasks = new TasksRepository(sql);
      // Before it was made, another user's, one still queued, and Tasks schedules and triggers made: none tells.
      await task(sql, { groups: ['old'], surface: 'mcp-http', createdAt: '2026-12-06T08:00:00.000Z', startedAt: '2026-12-06T08:00:01.000Z' });
      await task(sql, { owner: 'bob@example.com', groups: ['bobs'], surface: 'chat', createdAt: '2026-12-06T10:00:00.000Z', startedAt: '2026-12-06T10:00:01.000Z' });
      await task(sql, { groups: ['queued'], surface: 'chat', createdAt: '2026-12-06T10:30:00.000Z', startedAt: null });
      await task(sql, { groups: ['by-a-schedule'], surface: 'schedule', createdAt: '2026-12-06T10:40:00.000Z', startedAt: '2026-12-06T10:40:01.000Z' });
      expect(await tasks.presentedSince(stored.user, MADE_AT)).toBeNull();
      await task(sql, { groups: ['dev', 'ops'], surface: 'chat', createdAt: '2026-12-06T09:30:00.000Z', startedAt: '2026-12-06T09:30:01.000Z' });
      await task(sql, { groups: [], surface: 'a2a', createdAt: '2026-12-06T10:20:00.000Z', startedAt: '2026-12-06T10:20:01.000Z' });
      await task(sql, { groups: ['by-a-trigger'], surface: 'trigger', createdAt: '2026-12-06T10:50:00.000Z', startedAt: '2026-12-06T10:50:01.000Z' });
      // The identity provider took every group away: the latest in-person Task says so, and the fire follows.
      expect(await tasks.presentedSince(stored.user, MADE_AT)).toEqual({ groups: [], email: null });
      await task(sql, { groups: ['ops'], surface: 'mcp-http', createdAt: '2026-12-06T11:00:00.000Z', startedAt: '2026-12-06T11:00:01.000Z' });
      expect(await tasks.presentedSince(stored.user, MADE_AT)).toEqual({ groups: ['ops'], email: null });
    });
  });
});
