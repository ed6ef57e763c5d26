import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../src/config/agent-config.js';
import { subjectOf } from '../../src/history/checkpoint-meta.js';
import { GitRepository } from '../../src/history/git-repository.js';
import { timelineOf } from '../../src/history/history-timeline.js';
import { HistoryBound } from '../../src/history/history-bound.js';
import { HistoryStores } from '../../src/history/history-stores.js';
import { HistoryTotalBound } from '../../src/history/history-total-bound.js';
import { buildHistory, FolderWorkspaces } from '../support/fakes/history.js';

/** Issue 37, round three: history repository exhaustion (many sessions, many Tasks) is bounded in total too. */
const bases: string[] = [];
afterEach(async () => {
  for (const base of bases.splice(0)) await rm(base, { recursive: true, force: true });
});

async function folder(prefix: string): Promise<string> {
  const base = await mkdtemp(join(tmpdir(), prefix));
  bases.push(base);
  return base;
}

describe('HistoryService: the history.max_total_bytes bound', () => {
  it('removes the checkpoints of the least recently used sessions past the total, never the current one; their diffs say why', async () => {
    const base = await folder('oam-history-total-');
    const config = validateConfig({
      database: { type: 'sqlite', path: join(base, 'agent.sqlite') },
      history: { dir: join(base, 'history'), max_bytes: 10_000_000, max_total_bytes: 1_048_576 },
    });
    const workspaces = new FolderWorkspaces(join(base, 'ws'));
    const history = buildHistory({ config, workspace: workspaces, sessions: {} as never }).service;
    const sessions = [1, 2, 3].map((n) => `00000000-0000-4000-8000-00000000010${n}`);
    const tasks = [1, 2, 3].map((n) => `00000000-0000-4000-8000-00000000000${n}`);
    for (const [n, sessionId] of sessions.entries()) {
      const started = await history.begin({ id: tasks[n], sessionId, owner: 'alice', request: `task ${n}` });
      await writeFile(join(workspaces.root(sessionId), 'blob.bin'), randomBytes(450_000));
      expect(await history.finish(started, 'done')).toBe(`done\n\ndiff: agent-session://${sessionId}/tasks/${tasks[n]}/diff`);
    }
    // 3 x 450 KB is past 1 MiB: the first session (used least recently) lost its checkpoints.
    expect(await history.timeline(sessions[0])).toEqual([]);
    expect((await history.diff(sessions[0], tasks[0])).text).toMatch(/# dropped: history.max_total_bytes \(1048576 bytes\) reached; this session's checkpoints were removed/);
    expect((await history.timeline(sessions[1])).map((task) => task.taskId)).toEqual([tasks[1]]);
    expect((await history.timeline(sessions[2])).map((task) => task.taskId)).toEqual([tasks[2]]);
    // Its objects went too (its newest checkpoint with them); its next Task checkpoints afresh.
    const emptied = new GitRepository(join(base, 'history', 'sessions', `${sessions[0]}.git`));
    expect((await emptied.objectStore()).bytes).toBeLessThan(10_000);
    const next = '00000000-0000-4000-8000-000000000004';
    const started = await history.begin({ id: next, sessionId: sessions[0], owner: 'alice', request: 'again' });
    await writeFile(join(workspaces.root(sessions[0]), 'note.txt'), 'hello\n');
    await history.finish(started, 'done');
    expect((await history.diff(sessions[0], next)).text).toContain('+hello');
  });
});

describe('HistoryTotalBound: the sizes it reads after every Task', () => {
  it("walks a session's object store again only once its pack folder changed", async () => {
    const base = await folder('oam-history-sizes-');
    const config = validateConfig({ database: { type: 'sqlite', path: join(base, 'agent.sqlite') }, history: { dir: join(base, 'history'), max_total_bytes: 1_048_576 } });
    const stores = new HistoryStores(config);
    const [quiet, busy] = ['00000000-0000-4000-8000-000000000301', '00000000-0000-4000-8000-000000000302'].map((id) => stores.store(id).repo);
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const repo of [quiet, busy]) {
      await repo.ensure();
      await writeFile(join(repo.dir, 'objects', 'pack', 'pack-a.pack'), randomBytes(1000));
      await utimes(join(repo.dir, 'objects', 'pack'), hourAgo, hourAgo);
    }
    const walks = jest.spyOn(GitRepository.prototype, 'objectStore');
    try {
      const bound = new HistoryTotalBound(config, stores);
      await bound.bound('00000000-0000-4000-8000-000000000399');
      expect(walks).toHaveBeenCalledTimes(2);
      await bound.bound('00000000-0000-4000-8000-000000000399');
      expect(walks).toHaveBeenCalledTimes(2);
      // A new pack changes the folder: that session is walked again, the settled one is not.
      await writeFile(join(busy.dir, 'objects', 'pack', 'pack-b.pack'), randomBytes(1000));
      await bound.bound('00000000-0000-4000-8000-000000000399');
      expect(walks).toHaveBeenCalledTimes(3);
      expect(await walks.mock.results[2].value).toEqual({ bytes: 2000, packs: 2 });
    } finally {
      walks.mockRestore();
    }
  });
});

describe('HistoryBound: a history of many small Tasks over history.max_bytes', () => {
  it('finds how many of the oldest go in a few reads of the object graph, not one per Task, down to the low-water mark', async () => {
    const base = await folder('oam-history-many-');
    const config = validateConfig({ database: { type: 'sqlite', path: join(base, 'agent.sqlite') }, history: { dir: join(base, 'history'), max_bytes: 1_048_576 } });
    const sessionId = '00000000-0000-4000-8000-000000000401';
    const store = new HistoryStores(config).store(sessionId);
    await store.repo.ensure();
    // 80 Tasks, each an end checkpoint holding its own 20 000 random bytes (as fast-import writes a checkpoint).
    const taskIds = Array.from({ length: 80 }, (_, n) => `00000000-0000-4000-8000-${String(500 + n).padStart(12, '0')}`);
    await store.repo.fastImport(async (write) => {
      for (const [n, taskId] of taskIds.entries()) {
        const blob = randomBytes(20_000);
        const message = subjectOf({ seq: n + 1, kind: 'after', taskId, sessionId });
        await write(`blob\nmark :${n + 1}\ndata ${blob.length}\n`);
        await write(blob);
        await write(
          `\ncommit refs/oam/tasks/${taskId}/after\ncommitter oam <oam@localhost> 0 +0000\ndata ${Buffer.byteLength(message)}\n${message}\nM 100644 :${n + 1} blob.bin\n\n`,
        );
      }
      await write('done\n');
    });
    const git = jest.spyOn(GitRepository.prototype, 'git');
    try {
      await new HistoryBound(config).bound(store, taskIds[79]);
      const reads = git.mock.calls.filter(([args]) => args[0] === 'rev-list').length;
      expect(reads).toBeLessThanOrEqual(7);
    } finally {
      git.mockRestore();
    }
    const kept = (await timelineOf(store.repo)).map((task) => task.taskId);
    expect(kept).toEqual(taskIds.slice(80 - kept.length));
    // Down to 80 % of the bound, and not one Task more than that took.
    const bytes = (await store.repo.objectStore()).bytes;
    expect(bytes).toBeLessThanOrEqual(1_048_576 * 0.8);
    expect(bytes).toBeGreaterThan(1_048_576 * 0.8 - 20_500);
  });
});

describe('HistoryBound: many Tasks leave no pile of loose refs', () => {
  it('folds the refs of more than 500 Tasks into packed-refs, keeping every one', async () => {
    const base = await folder('oam-history-refs-');
    const config = validateConfig({ database: { type: 'sqlite', path: join(base, 'agent.sqlite') }, history: { dir: join(base, 'history') } });
    const store = new HistoryStores(config).store('00000000-0000-4000-8000-000000000201');
    const repo = store.repo;
    await repo.ensure();
    const tree = (await repo.git(['mktree'], { input: '' })).stdout.toString().trim();
    const commit = (await repo.text(['commit-tree', tree, '-m', 'checkpoint'])).trim();
    const names = Array.from({ length: 600 }, (_, n) => `refs/oam/tasks/00000000-0000-4000-8000-${String(n).padStart(12, '0')}/before`);
    await repo.git(['update-ref', '--stdin'], { input: names.map((name) => `create ${name} ${commit}\n`).join('') });
    expect((await readdir(join(repo.dir, 'refs', 'oam', 'tasks'))).length).toBe(600);
    await new HistoryBound(config).bound(store, 'none');
    expect(await readdir(join(repo.dir, 'refs', 'oam', 'tasks')).catch(() => [])).toEqual([]);
    expect((await repo.text(['for-each-ref', 'refs/oam/tasks/'])).trim().split('\n')).toHaveLength(600);
  });
});
