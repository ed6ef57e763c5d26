import { afterEach, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { TaskStepEntity, type StepKind } from '../../src/agent/task-step.entity.js';
import { TraceRepository } from '../../src/agent/trace.repository.js';
import { validateConfig } from '../../src/config/agent-config.js';
import type { AppConfig } from '../../src/config/app-config.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { PlainSql } from '../../src/database/plain-sql.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { TaskEntity } from '../../src/queue/task.entity.js';
import { TasksRepository, type Lease } from '../../src/queue/tasks.repository.js';
import { SessionEntity } from '../../src/sessions/session.entity.js';
import { UsageRepository } from '../../src/usage/usage.repository.js';
import { UsageService, utcDay } from '../../src/usage/usage.service.js';
import { migratedDatabase, type DatabaseKind } from '../support/databases.js';

const AT = '2026-12-06T10:00:00.000Z';
const NOW = Date.parse('2026-12-06T10:00:05.000Z');
const SESSION = '10000000-0000-4000-8000-000000000001';
const T1 = 'a0000000-0000-4000-8000-000000000001';
const T2 = 'b0000000-0000-4000-8000-000000000002';

/**
 * Issue 42: usage no longer reads `tasks` and `task_steps`; the queue's fenced ending hands over the Task's owner
 * and tokens, the agent's trace counts its calls, and usage adds them to usage_daily in one upsert. Two replicas
 * (two connections to one database) each end a Task of the same owner and add it at once, and a stale ending is fenced out.
 */
describe.each<DatabaseKind>(['sqlite', 'postgres'])('a finished Task added to usage_daily on %s', (kind) => {
  const sources: DataSource[] = [];
  afterEach(async () => {
    for (const source of sources.splice(0)) await source.destroy();
  });

  /** One replica: its own connection and the three owners' repositories over it. */
  async function replica(database: AppConfig['database']) {
    const source = new DataSource(dataSourceOptions(database, [SessionEntity, TaskEntity, TaskStepEntity]));
    await source.initialize();
    sources.push(source);
    const sql = new PlainSql(source);
    return {
      sql,
      tasks: new TasksRepository(sql),
      trace: new TraceRepository(sql),
      usage: new UsageService(new UsageRepository(sql), new TraceRepository(sql), validateConfig({}), new Metrics()),
    };
  }

  /** A running Task of alice's under `lease`, and its trace: a step of each of `kinds`. */
  async function running(sql: PlainSql, trace: TraceRepository, lease: Lease, kinds: StepKind[]) {
    await sql.run(
      "INSERT INTO tasks (id, session_id, owner, request, status, attempt, lease_owner, input_tokens, output_tokens, created_at, updated_at, started_at) VALUES (?, ?, 'alice', 'r', 'running', ?, ?, 7, 3, ?, ?, ?)",
      [lease.taskId, SESSION, lease.attempt, lease.owner, AT, AT, AT],
    );
    for (const stepKind of kinds)
      await trace.append(
        { taskId: lease.taskId, subtask: '', kind: stepKind, name: stepKind, outcome: 'ok', durationMs: 1, startedAt: AT, detail: {} },
        { sessionId: SESSION, owner: 'alice' },
      );
  }

  it('adds each Task once, with the tokens its ending wrote and the calls its trace holds, from two replicas at once', async () => {
    const database = validateConfig({ database: await migratedDatabase(kind) }).database;
    const a = await replica(database);
    const b = await replica(database);
    await a.sql.run('INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)', [SESSION, 'alice', AT]);
    const first: Lease = { taskId: T1, attempt: 1, owner: 'replica-a' };
    const second: Lease = { taskId: T2, attempt: 2, owner: 'replica-b' };
    // One Task is active at a time (idx_tasks_one_active): replica A ends its Task, replica B claims and ends the next.
    await running(a.sql, a.trace, first, ['plan', 'model_call', 'tool_call', 'model_call', 'command', 'mcp_tool', 'limit']);
    expect(await a.trace.callCounts(T1)).toEqual({ modelCalls: 2, toolCalls: 3 });
    // The ending's own report wins over the row's earlier one; a Task whose ending reports none keeps its row's tokens.
    const endedFirst = await a.tasks.finish(first, 'completed', 'done', { inputTokens: 100, outputTokens: 20 });
    expect(endedFirst).toEqual({ owner: 'alice', inputTokens: 100, outputTokens: 20 });
    await running(b.sql, b.trace, second, ['model_call', 'steer']);
    const endedSecond = await b.tasks.finish(second, 'failed', 'no', {});
    expect(endedSecond).toEqual({ owner: 'alice', inputTokens: 7, outputTokens: 3 });
    // A second ending of the same attempt (a replica that lost the lease) is fenced out: nothing to hand over.
    expect(await b.tasks.finish(first, 'failed', 'late', { inputTokens: 999 })).toBeNull();

    await Promise.all([a.usage.recordTask({ taskId: T1, startedAt: AT, ...endedFirst! }, NOW), b.usage.recordTask({ taskId: T2, startedAt: null, ...endedSecond! }, NOW)]);
    expect(await a.usage.report(utcDay(NOW), utcDay(NOW), 'alice')).toEqual([
      { owner: 'alice', day: '2026-12-06', tasks: 2, modelCalls: 3, toolCalls: 3, inputTokens: 107, outputTokens: 23, wallMs: 5000 },
    ]);
  });
});
