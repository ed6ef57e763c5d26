import { afterEach, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { validateConfig } from '../../src/config/agent-config.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { PlainSql } from '../../src/database/plain-sql.js';
import { TaskEntity } from '../../src/queue/task.entity.js';
import { TasksRepository } from '../../src/queue/tasks.repository.js';
import { SessionEntity } from '../../src/sessions/session.entity.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';
import { MemoryTasks } from '../support/fakes/memory-tasks.js';
import { MemoryUnitOfWork } from '../support/fakes/memory-unit-of-work.js';
import { ManualClock, manualSqlClock } from '../support/manual-clock.js';

const sessionOf = (owner: string) => (owner === 'mallory' ? '11111111-1111-4111-8111-111111111111' : '22222222-2222-4222-8222-222222222222');

/**
 * Issue 20, finding 6: round-robin by owner in claimNext, on both databases, with the positions the console shows.
 * And on MemoryTasks, the in-memory repository of the service specs (issue 42): it must answer as the real one.
 */
describe.each<DatabaseKind | 'memory'>(['sqlite', 'postgres', 'memory'])('fair claim order on %s', (kind) => {
  const sources: DataSource[] = [];
  // The claims' start times: a clock each claim moves on, so that they differ without waiting.
  const clock = new ManualClock();
  afterEach(async () => {
    for (const source of sources.splice(0)) await source.destroy();
  });

  async function open() {
    if (kind === 'memory') return openMemory();
    const database = validateConfig({ database: await freshDatabase(kind) }).database;
    const source = new DataSource(dataSourceOptions(database, [SessionEntity, TaskEntity]));
    await source.initialize();
    sources.push(source);
    const at = new Date(clock.now()).toISOString();
    for (const owner of ['mallory', 'bob']) await source.getRepository(SessionEntity).insert({ id: sessionOf(owner), owner, createdAt: at });
    let n = 0;
    const submit = async (owner: string, count: number) => {
      for (let i = 0; i < count; i++, n++) {
        await source.getRepository(TaskEntity).insert({
          id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
          sessionId: sessionOf(owner),
          owner,
          request: `${owner} ${i}`,
          temperature: null,
          status: 'queued',
          createdAt: at,
          updatedAt: at,
        });
      }
    };
    return { repo: new TasksRepository(new PlainSql(source, undefined, undefined, manualSqlClock(clock))), submit };
  }

  function openMemory() {
    const tasks = new MemoryTasks(clock);
    const unitOfWork = new MemoryUnitOfWork([tasks]);
    let n = 0;
    const submit = async (owner: string, count: number) => {
      for (let i = 0; i < count; i++, n++) {
        const at = new Date(clock.now()).toISOString();
        const task = Object.assign(new TaskEntity(), {
          id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
          sessionId: sessionOf(owner),
          owner,
          request: `${owner} ${i}`,
          status: 'queued',
          attempt: 0,
          startedAt: null,
          createdAt: at,
          updatedAt: at,
        });
        await unitOfWork.commit({ writes: tasks.insertion(task, []) });
      }
    };
    return { repo: tasks as unknown as TasksRepository, submit };
  }

  async function runNext(repo: TasksRepository): Promise<string> {
    const task = await repo.claimNext('runner', 30_000);
    expect(task).not.toBeNull();
    // A second claim while one is active gets nothing: the one-active invariant holds.
    expect(await repo.claimNext('other', 30_000)).toBeNull();
    await repo.finish({ taskId: task!.id, attempt: task!.attempt, owner: 'runner' }, 'completed', 'done');
    // Start times must differ for the order to be decided by them (ISO text at millisecond precision).
    clock.advance(5);
    return task!.request;
  }

  it("serves bob's one Task second, not after mallory's flood, and alternates owners after that", async () => {
    const { repo, submit } = await open();
    await submit('mallory', 6);
    await submit('bob', 2);
    const queued = await repo.list({ status: 'queued' }, 100, null);
    const positions = await repo.queuePositions(queued);
    const byRequest = Object.fromEntries(queued.map((task) => [task.request, positions.get(task.id)]));
    expect(byRequest).toEqual({ 'mallory 0': 1, 'bob 0': 2, 'mallory 1': 3, 'bob 1': 4, 'mallory 2': 5, 'mallory 3': 6, 'mallory 4': 7, 'mallory 5': 8 });
    const order: string[] = [];
    for (let i = 0; i < 8; i++) order.push(await runNext(repo));
    expect(order).toEqual(['mallory 0', 'bob 0', 'mallory 1', 'bob 1', 'mallory 2', 'mallory 3', 'mallory 4', 'mallory 5']);
    expect(await repo.claimNext('runner', 30_000)).toBeNull();
  });

  it('puts a newcomer (no Task started yet) ahead of the users already served, and the positions say so', async () => {
    const { repo, submit } = await open();
    await submit('mallory', 3);
    expect(await runNext(repo)).toBe('mallory 0');
    await submit('bob', 1);
    const queued = await repo.list({ status: 'queued' }, 100, null);
    const positions = await repo.queuePositions(queued);
    expect(Object.fromEntries(queued.map((task) => [task.request, positions.get(task.id)]))).toEqual({ 'bob 0': 1, 'mallory 1': 2, 'mallory 2': 3 });
    expect(await runNext(repo)).toBe('bob 0');
  });
});
