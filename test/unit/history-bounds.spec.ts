import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitRepository } from '../../src/history/git-repository.js';
import { HistoryBounds } from '../../src/history/history-bounds.js';
import { HistoryService } from '../../src/history/history.service.js';

/** Issue 37, round three: history repository exhaustion (many sessions, many Tasks) is bounded in total too. */
describe('HistoryService: the history.max_total_bytes bound', () => {
  it('removes the checkpoints of the least recently used sessions past the total, never the current one; their diffs say why', async () => {
    const base = await mkdtemp(join(tmpdir(), 'oam-history-total-'));
    const config = {
      history: { enabled: true, dir: join(base, 'history'), maxFiles: 1000, largeFileBytes: 1 << 20, maxBytes: 10_000_000, maxTotalBytes: 700_000, diffMaxLinesPerFile: 100 },
      workspace: { isolation: 'session', retentionDays: 0 },
      database: { type: 'sqlite', path: join(base, 'agent.sqlite') },
      mcp: { resources: { maxReadBytes: 100_000 } },
    };
    const workspace = { forTask: async (sessionId: string) => ({ root: join(base, 'ws', sessionId) }) };
    const history = new HistoryService(config as never, workspace as never, {} as never, {} as never);
    const sessions = [1, 2, 3].map((n) => `00000000-0000-4000-8000-00000000010${n}`);
    const tasks = [1, 2, 3].map((n) => `00000000-0000-4000-8000-00000000000${n}`);
    try {
      for (const [n, sessionId] of sessions.entries()) {
        await mkdir(join(base, 'ws', sessionId), { recursive: true });
        const started = await history.begin({ id: tasks[n], sessionId, request: `task ${n}` });
        await writeFile(join(base, 'ws', sessionId, 'blob.bin'), randomBytes(300_000));
        expect(await history.finish(started, 'done')).toBe(`done\n\ndiff: agent-session://${sessionId}/tasks/${tasks[n]}/diff`);
      }
      // 3 x 300 KB is past 700 000 bytes: the first session (used least recently) lost its checkpoints.
      expect(await history.timeline(sessions[0])).toEqual([]);
      expect((await history.diff(sessions[0], tasks[0])).text).toMatch(/# dropped: history.max_total_bytes \(700000 bytes\) reached; this session's checkpoints were removed/);
      expect((await history.timeline(sessions[1])).map((task) => task.taskId)).toEqual([tasks[1]]);
      expect((await history.timeline(sessions[2])).map((task) => task.taskId)).toEqual([tasks[2]]);
      // Its objects went too (its newest checkpoint with them); its next Task checkpoints afresh.
      const emptied = new GitRepository(join(base, 'history', 'sessions', `${sessions[0]}.git`));
      expect((await emptied.objectStore()).bytes).toBeLessThan(10_000);
      const next = '00000000-0000-4000-8000-000000000004';
      const started = await history.begin({ id: next, sessionId: sessions[0], request: 'again' });
      await writeFile(join(base, 'ws', sessions[0], 'note.txt'), 'hello\n');
      await history.finish(started, 'done');
      expect((await history.diff(sessions[0], next)).text).toContain('+hello');
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});

describe('HistoryBounds: many Tasks leave no pile of loose refs', () => {
  it('folds the refs of more than 500 Tasks into packed-refs, keeping every one', async () => {
    const base = await mkdtemp(join(tmpdir(), 'oam-history-refs-'));
    const repo = new GitRepository(join(base, 'repo.git'));
    try {
      await repo.ensure();
      const tree = (await repo.git(['mktree'], { input: '' })).stdout.toString().trim();
      const commit = (await repo.text(['commit-tree', tree, '-m', 'checkpoint'])).trim();
      const names = Array.from({ length: 600 }, (_, n) => `refs/oam/tasks/00000000-0000-4000-8000-${String(n).padStart(12, '0')}/before`);
      await repo.git(['update-ref', '--stdin'], { input: names.map((name) => `create ${name} ${commit}\n`).join('') });
      expect((await readdir(join(repo.dir, 'refs', 'oam', 'tasks'))).length).toBe(600);
      await new HistoryBounds(base, { maxBytes: 1 << 30, maxTotalBytes: 1 << 30 }, async () => undefined).boundRepository(repo, 'none');
      expect(await readdir(join(repo.dir, 'refs', 'oam', 'tasks')).catch(() => [])).toEqual([]);
      expect((await repo.text(['for-each-ref', 'refs/oam/tasks/'])).trim().split('\n')).toHaveLength(600);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });
});
