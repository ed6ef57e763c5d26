import { describe, expect, it } from '@jest/globals';
import { ApprovalsRepository, type ApprovalAnswer } from '../../src/approvals/approvals.repository.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { DataSource } from 'typeorm';
import { ApprovalEntity } from '../../src/approvals/approval.entity.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { PlainSql } from '../../src/database/plain-sql.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

const AT = '2026-12-06T10:00:00.000Z';
const TASK = { taskId: 'a0000000-0000-4000-8000-000000000001', sessionId: '10000000-0000-4000-8000-000000000001', owner: 'alice@example.com' };
const APPROVAL = 'c0000000-0000-4000-8000-000000000001';
const ANSWER: ApprovalAnswer = { state: 'granted', answeredBy: TASK.owner, answeredClient: 'spec', answeredVia: 'conversation', reason: null };

class Refused extends Error {}

async function pausedForTheConversation(sql: PlainSql): Promise<void> {
  await sql.run('INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)', [TASK.sessionId, TASK.owner, AT]);
  await sql.run("INSERT INTO tasks (id, session_id, owner, request, status, created_at, updated_at) VALUES (?, ?, ?, ?, 'completed', ?, ?)", [
    TASK.taskId,
    TASK.sessionId,
    TASK.owner,
    'install the deps',
    AT,
    AT,
  ]);
  await sql.run(
    "INSERT INTO approvals (id, task_id, session_id, owner, kind, tool, subject, resume, state, waiting, created_at) VALUES (?, ?, ?, ?, 'approval', 'run_command', 'npm install', '', 'pending', FALSE, ?)",
    [APPROVAL, TASK.taskId, TASK.sessionId, TASK.owner, AT],
  );
}

/** What the intake commits with the Task that carries a decision: the decision's steps (here without the Task's own rows). */
function decide(sql: PlainSql, answerTaskId: string, owner = TASK.owner, answer = ANSWER): Promise<unknown> {
  const steps = new ApprovalsRepository(sql).decision(APPROVAL, owner, answerTaskId, answer, () => new Refused());
  return new UnitOfWork(sql).commit({ writes: steps }).then(
    () => 'decided',
    (error: unknown) => (error instanceof Refused ? 'refused' : error),
  );
}

/** A migrated database of `kind` whose repositories hydrate ApprovalEntity, closed whatever happens. */
async function withDatabase(kind: DatabaseKind, use: (sql: PlainSql) => Promise<void>): Promise<void> {
  const { database } = validateConfig({ database: await freshDatabase(kind) });
  const source = new DataSource(dataSourceOptions(database, [ApprovalEntity]));
  try {
    await use(new PlainSql(await source.initialize()));
  } finally {
    if (source.isInitialized) await source.destroy();
  }
}

const approval = async (sql: PlainSql) =>
  (await sql.all<{ state: string; answer_task_id: string | null }>('SELECT state, answer_task_id FROM approvals WHERE id = ?', [APPROVAL]))[0];

/** ApprovalsRepository.decision (ADR 0020): one decision on a request left for the conversation, taken once, by its owner. */
describe.each<DatabaseKind>(['sqlite', 'postgres'])('a decision carried by a new Task (%s)', (kind) => {
  it('takes the first decision; a second (another Task, or another user) is refused and changes nothing', async () => {
    await withDatabase(kind, async (sql) => {
      await pausedForTheConversation(sql);
      expect(await decide(sql, 'b0000000-0000-4000-8000-000000000001', 'bob@example.com')).toBe('refused');
      expect(await approval(sql)).toEqual({ state: 'pending', answer_task_id: null });
      expect(await decide(sql, 'b0000000-0000-4000-8000-000000000002')).toBe('decided');
      expect(await decide(sql, 'b0000000-0000-4000-8000-000000000003', TASK.owner, { ...ANSWER, state: 'denied' })).toBe('refused');
      expect(await approval(sql)).toEqual({ state: 'granted', answer_task_id: 'b0000000-0000-4000-8000-000000000002' });
    });
  });

  it('takes one of two decisions committed at once, on their own transactions', async () => {
    await withDatabase(kind, async (sql) => {
      await pausedForTheConversation(sql);
      const outcomes = await Promise.all(['b0000000-0000-4000-8000-000000000004', 'b0000000-0000-4000-8000-000000000005'].map((id) => decide(sql, id)));
      expect(outcomes.sort()).toEqual(['decided', 'refused']);
    });
  });
});
