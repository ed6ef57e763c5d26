import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { validateConfig } from '../../src/config/agent-config.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { TaskEntity } from '../../src/queue/task.entity.js';
import { TasksRepository } from '../../src/queue/tasks.repository.js';
import { SessionEntity } from '../../src/sessions/session.entity.js';

describe('the one-active-Task rule is enforced by the database (SQLite file shared by two connections)', () => {
  const sources: DataSource[] = [];

  afterEach(async () => {
    for (const source of sources.splice(0)) await source.destroy();
  });

  async function open(path: string) {
    const source = new DataSource(dataSourceOptions(validateConfig({ database: { path } }).database));
    await source.initialize();
    sources.push(source);
    return source;
  }

  async function seed(source: DataSource, count: number) {
    const at = new Date().toISOString();
    await source.getRepository(SessionEntity).insert({ id: '11111111-1111-4111-8111-111111111111', owner: 'u', createdAt: at });
    for (let n = 0; n < count; n++) {
      await source.getRepository(TaskEntity).insert({
        id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
        sessionId: '11111111-1111-4111-8111-111111111111',
        owner: 'u',
        request: `task ${n}`,
        temperature: null,
        status: 'queued',
        createdAt: at,
        updatedAt: at,
      });
    }
  }

  it('lets exactly one of two processes claim, in FIFO order, and the next only after the first ends', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'oam-db-')), 'agent.sqlite');
    const a = await open(path);
    const b = await open(path);
    await seed(a, 3);
    const repoA = new TasksRepository(a);
    const repoB = new TasksRepository(b);
    const [first, second] = await Promise.all([repoA.claimNext(), repoB.claimNext()]);
    const claimed = [first, second].filter((task) => task !== null);
    expect(claimed).toHaveLength(1);
    expect(claimed[0]!.request).toBe('task 0');
    expect(await repoB.claimNext()).toBeNull();
    await expect(
      b.query(`UPDATE tasks SET status = 'running' WHERE request = 'task 2'`),
    ).rejects.toThrow(/UNIQUE constraint failed/);
    await repoA.finish(claimed[0]!.id, 'completed', 'done');
    expect((await repoB.claimNext())!.request).toBe('task 1');
  });

  it('applies the committed migrations and never synchronizes', async () => {
    const source = await open(':memory:');
    expect(source.options.synchronize).toBe(false);
    expect((await source.query('SELECT name FROM migrations')).map((row: { name: string }) => row.name)).toEqual(['InitialSchema1764633600000', 'TaskSteps1764720000000']);
  });
});
