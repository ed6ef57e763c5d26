import { afterEach, describe, expect, it } from '@jest/globals';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { validateConfig } from '../../src/config/agent-config.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { PlainSql } from '../../src/database/plain-sql.js';
import { TaskEntity } from '../../src/queue/task.entity.js';
import { TasksRepository, type Lease } from '../../src/queue/tasks.repository.js';
import { SessionEntity } from '../../src/sessions/session.entity.js';
import { MemoryTasks } from '../support/fakes/memory-tasks.js';
import { MemoryUnitOfWork } from '../support/fakes/memory-unit-of-work.js';
import { ManualClock, manualSqlClock } from '../support/manual-clock.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

const MIGRATIONS = resolve(import.meta.dirname, '../../src/database/migrations');

const SESSION = '11111111-1111-4111-8111-111111111111';

describe.each<DatabaseKind>(['sqlite', 'postgres'])('queue invariants on %s', (kind) => {
  const sources: DataSource[] = [];

  afterEach(async () => {
    for (const source of sources.splice(0)) await source.destroy();
  });

  /** Two connections (as two processes or replicas would have) on one fresh database. */
  async function twoConnections(clock?: ManualClock) {
    const database = validateConfig({ database: await freshDatabase(kind) }).database;
    const open = async () => {
      const source = new DataSource(dataSourceOptions(database, [SessionEntity, TaskEntity]));
      await source.initialize();
      sources.push(source);
      return source;
    };
    const a = await open();
    const b = await open();
    const sqlClock = clock && manualSqlClock(clock);
    return { a, b, repoA: new TasksRepository(new PlainSql(a, undefined, undefined, sqlClock)), repoB: new TasksRepository(new PlainSql(b, undefined, undefined, sqlClock)) };
  }

  async function seed(source: DataSource, count: number) {
    const at = new Date().toISOString();
    await source.getRepository(SessionEntity).insert({ id: SESSION, owner: 'u', createdAt: at });
    for (let n = 0; n < count; n++) {
      await source.getRepository(TaskEntity).insert({
        id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
        sessionId: SESSION,
        owner: 'u',
        request: `task ${n}`,
        temperature: null,
        status: 'queued',
        createdAt: at,
        updatedAt: at,
      });
    }
  }

  it('lets exactly one of two runners claim, in FIFO order, and the next only after the first ends', async () => {
    const { a, b, repoA, repoB } = await twoConnections();
    await seed(a, 3);
    const claims = await Promise.all([repoA.claimNext('A', 30_000), repoB.claimNext('B', 30_000)]);
    const claimed = claims.filter((task) => task !== null);
    expect(claimed).toHaveLength(1);
    expect(claimed[0]).toMatchObject({ request: 'task 0', status: 'planning', attempt: 1 });
    expect(await repoB.claimNext('B', 30_000)).toBeNull();
    await expect(b.query(`UPDATE tasks SET status = 'running' WHERE request = 'task 2'`)).rejects.toThrow(/UNIQUE constraint failed|duplicate key/);
    expect(await repoA.finish(leaseOf(claimed[0]), 'completed', 'done')).toMatchObject({ owner: expect.any(String), inputTokens: 0, outputTokens: 0 });
    expect((await repoB.claimNext('B', 30_000))!.request).toBe('task 1');
  });

  it('fences a stalled runner (T5.4): after its lease lapses and another attempt claims, its writes change nothing', async () => {
    const clock = new ManualClock();
    const { a, repoA, repoB } = await twoConnections(clock);
    await fencesAStalledRunner({ repoA, repoB, seed: (count) => seed(a, count) }, clock);
  });

  it('reclaims at once a Task whose owner is known dead, and passes the cancel flag to the runner', async () => {
    const { a, repoA, repoB } = await twoConnections();
    await reclaimsADeadOwnersTask({ repoA, repoB, seed: (count) => seed(a, count) });
  });

  it('applies the committed migrations and never synchronizes', async () => {
    const { a } = await twoConnections();
    expect(a.options.synchronize).toBe(false);
    const names = (await a.query('SELECT name FROM migrations ORDER BY id')).map((row: { name: string }) => row.name);
    // Every migration file committed, in the order of its timestamp, by the class name its file name gives.
    const committed = readdirSync(MIGRATIONS)
      .filter((file) => /^\d+-[a-z0-9-]+\.ts$/.test(file))
      .sort()
      .map((file) => {
        const [, stamp, slug] = /^(\d+)-(.+)\.ts$/.exec(file)!;
        return (
          slug
            .split('-')
            .map((word) => word[0].toUpperCase() + word.slice(1))
            .join('') + stamp
        );
      });
    expect(committed.length).toBeGreaterThanOrEqual(15);
    expect(names).toEqual(committed);
  });
});

/** Two runners on one database (two connections, or one MemoryTasks), and a way to queue `count` Tasks of one owner. */
interface Runners {
  repoA: TasksRepository;
  repoB: TasksRepository;
  seed: (count: number) => Promise<void>;
}

const leaseOf = (task: TaskEntity): Lease => ({ taskId: task.id, attempt: task.attempt, owner: task.leaseOwner! });

async function fencesAStalledRunner({ repoA, repoB, seed }: Runners, clock: ManualClock) {
  await seed(1);
  const stalled = (await repoA.claimNext('A', 1000))!;
  clock.advance(999);
  expect(await repoB.abandoned(() => false)).toHaveLength(0);
  clock.advance(2);
  const [abandoned] = await repoB.abandoned(() => false);
  expect(abandoned.id).toBe(stalled.id);
  expect(await repoB.reclaim(abandoned, 'queued', 'lease expired')).toBe(true);
  const retried = (await repoB.claimNext('B', 30_000))!;
  expect(retried).toMatchObject({ id: stalled.id, attempt: 2, leaseOwner: 'B' });
  const stale = leaseOf(stalled);
  expect(await repoA.renew(stale, 30_000)).toEqual({ held: false, cancelRequested: false });
  expect(await repoA.updateProgress(stale, { currentTask: 'stale write' })).toBe(false);
  expect(await repoA.finish(stale, 'completed', 'stale result')).toBeNull();
  expect(await repoB.renew(leaseOf(retried), 30_000)).toEqual({ held: true, cancelRequested: false });
  expect(await repoB.finish(leaseOf(retried), 'completed', 'B result')).toMatchObject({ owner: expect.any(String) });
  expect(await repoA.findById(stalled.id)).toMatchObject({ status: 'completed', result: 'B result', attempt: 2 });
}

async function reclaimsADeadOwnersTask({ repoA, repoB, seed }: Runners) {
  await seed(2);
  const task = (await repoA.claimNext('host/1/dead', 30_000))!;
  expect(await repoB.abandoned((owner) => owner === 'other')).toHaveLength(0);
  const [dead] = await repoB.abandoned((owner) => owner === 'host/1/dead');
  expect(await repoB.reclaim(dead, 'failed', 'interrupted')).toBe(true);
  expect(await repoB.findById(task.id)).toMatchObject({ status: 'failed', result: 'interrupted', leaseOwner: null });
  const next = (await repoB.claimNext('B', 30_000))!;
  expect(await repoA.requestCancel(next.id)).toBe(true);
  expect(await repoB.renew(leaseOf(next), 30_000)).toEqual({ held: true, cancelRequested: true });
}

/** MemoryTasks, the service specs' fake (issue 42), keeps the same leases and fences as the real repository. */
describe('queue invariants on memory', () => {
  function runners(clock = new ManualClock()): Runners {
    const tasks = new MemoryTasks(clock);
    const unitOfWork = new MemoryUnitOfWork([tasks]);
    const seed = async (count: number) => {
      for (let n = 0; n < count; n++) {
        const at = new Date(clock.now()).toISOString();
        const task = Object.assign(new TaskEntity(), {
          id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
          sessionId: SESSION,
          owner: 'u',
          request: `task ${n}`,
          status: 'queued',
          attempt: 0,
          leaseOwner: null,
          leaseExpiresAt: null,
          cancelRequested: false,
          startedAt: null,
          createdAt: at,
          updatedAt: at,
        });
        await unitOfWork.commit({ writes: tasks.insertion(task, []) });
      }
    };
    const repo = tasks as unknown as TasksRepository;
    return { repoA: repo, repoB: repo, seed };
  }

  it('fences a stalled runner (T5.4): after its lease lapses and another attempt claims, its writes change nothing', async () => {
    const clock = new ManualClock();
    await fencesAStalledRunner(runners(clock), clock);
  });

  it('reclaims at once a Task whose owner is known dead, and passes the cancel flag to the runner', async () => {
    await reclaimsADeadOwnersTask(runners());
  });
});
