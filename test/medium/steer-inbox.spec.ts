import { describe, expect, it } from '@jest/globals';
import { SteerInboxRepository, SteerRefused } from '../../src/agent/steer-inbox.repository.js';
import { ApprovalsRepository } from '../../src/approvals/approvals.repository.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { withMigratedDatabase } from '../../src/database/data-source-options.js';
import type { PlainSql } from '../../src/database/plain-sql.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { TasksRepository } from '../../src/queue/tasks.repository.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

const AT = '2026-12-06T10:00:00.000Z';
const TASK = { taskId: 'a0000000-0000-4000-8000-000000000001', sessionId: '10000000-0000-4000-8000-000000000001', owner: 'alice@example.com' };

async function runningTask(sql: PlainSql): Promise<void> {
  await sql.run('INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)', [TASK.sessionId, TASK.owner, AT]);
  await sql.run("INSERT INTO tasks (id, session_id, owner, request, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'running', ?, ?)", [
    TASK.taskId,
    TASK.sessionId,
    TASK.owner,
    'write the report',
    AT,
    AT,
  ]);
}

/** What the intake commits for a correction the running Task takes: the queue's count, guarded by the inbox, and its row. */
function accept(sql: PlainSql, text: string, max: number, unitOfWork = new UnitOfWork(sql)): Promise<void> {
  const { writes } = new SteerInboxRepository(sql).acceptance(TASK, new TasksRepository(sql).correctionCount(TASK.taskId, TASK.owner, true), text, max);
  return unitOfWork.commit({ writes });
}

const refusal = (promise: Promise<void>) =>
  promise.then(
    () => null,
    (error: unknown) => (error instanceof SteerRefused ? error.reason : error),
  );

const rows = (sql: PlainSql) =>
  sql.all<{ body: string; position: number | string }>("SELECT body, position FROM run_waits WHERE task_id = ? AND kind = 'steer' ORDER BY position", [TASK.taskId]);
const steerCount = async (sql: PlainSql) => Number((await sql.all<{ n: number | string }>('SELECT steer_count AS n FROM tasks WHERE id = ?', [TASK.taskId]))[0].n);

/**
 * Issue 42: the inbox (agent/) stores a correction's `run_waits` row, the queue (which owns `tasks`) counts it on
 * the Task's row, in one unit; the row's number is the count the guard read, and the queue's close refuses what
 * comes after it.
 */
describe.each<DatabaseKind>(['sqlite', 'postgres'])('a correction counted by the queue and stored by the inbox (%s)', (kind) => {
  it('numbers each correction by the count, refuses one past the most with nothing stored', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      await runningTask(sql);
      await accept(sql, 'first', 2);
      await accept(sql, 'second', 2);
      expect(await refusal(accept(sql, 'third', 2))).toBe('limit');
      expect((await rows(sql)).map((row) => [row.body, Number(row.position)])).toEqual([
        ['first', 1],
        ['second', 2],
      ]);
      expect(await steerCount(sql)).toBe(2);
    });
  });

  it('gives corrections committed at once, on their own transactions, each its own number', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      await runningTask(sql);
      // One unit of work each: separate transactions (on PostgreSQL separate connections), as on several replicas.
      await Promise.all(['a', 'b', 'c', 'd', 'e'].map((text) => accept(sql, text, 10, new UnitOfWork(sql))));
      expect((await rows(sql)).map((row) => Number(row.position))).toEqual([1, 2, 3, 4, 5]);
      expect(await steerCount(sql)).toBe(5);
    });
  });

  it('closes only when the run received every counted correction; one after the close is refused', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      await runningTask(sql);
      const tasks = new TasksRepository(sql);
      await accept(sql, 'first', 5);
      expect(await tasks.closeSteering(TASK.taskId, 0)).toBe(false);
      expect(await tasks.closeSteering(TASK.taskId, 1)).toBe(true);
      expect(await refusal(accept(sql, 'too late', 5))).toBe('not_running');
      expect(await rows(sql)).toHaveLength(1);
    });
  });

  it('keeps a correction for a paused Task while its request waits, and refuses it once the request was answered', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await withMigratedDatabase(database, async (sql) => {
      await runningTask(sql);
      await sql.run("UPDATE tasks SET status = 'completed', steering_closed = TRUE WHERE id = ?", [TASK.taskId]);
      const approval = 'c0000000-0000-4000-8000-000000000001';
      await sql.run(
        "INSERT INTO approvals (id, task_id, session_id, owner, kind, tool, subject, resume, state, waiting, created_at) VALUES (?, ?, ?, ?, 'approval', 'run_command', 'npm test', '{}', 'pending', FALSE, ?)",
        [approval, TASK.taskId, TASK.sessionId, TASK.owner, AT],
      );
      const keep = (text: string) => {
        const counted = new TasksRepository(sql).correctionCount(TASK.taskId, TASK.owner, false);
        const { writes } = new SteerInboxRepository(sql).keptDuringWait(TASK, new ApprovalsRepository(sql).stillPending(approval, TASK.taskId), counted, text, 5);
        return new UnitOfWork(sql).commit({ writes });
      };
      await keep('also run the linter');
      await sql.run("UPDATE approvals SET state = 'granted' WHERE id = ?", [approval]);
      expect(await refusal(keep('too late'))).toBe('not_running');
      expect((await rows(sql)).map((row) => [row.body, Number(row.position)])).toEqual([['also run the linter', 1]]);
      expect(await steerCount(sql)).toBe(1);
    });
  });
});
