import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../src/config/agent-config.js';
import { GitRepository } from '../../src/history/git-repository.js';
import type { HistoryTask } from '../../src/history/history.service.js';
import { SessionEntity } from '../../src/sessions/session.entity.js';
import type { SessionsRepository } from '../../src/sessions/sessions.repository.js';
import { SessionsService } from '../../src/sessions/sessions.service.js';
import { buildHistory, FolderWorkspaces } from '../support/fakes/history.js';
import { MemorySessionsRepository } from '../support/fakes/memory-sessions.js';
import { ManualClock } from '../support/manual-clock.js';

/**
 * HistoryService at the service level (issue 42): its real parts (history.module.ts) on real git in a temporary
 * folder, the workspaces as folders, sessions and the trace in memory. What the history owns: checkpoints around a
 * Task and the diff they give, undo, a crash mid-Task, the max_bytes bound, a fork's workspace, retention.
 */
const ALICE_SESSION = '00000000-0000-4000-8000-00000000a001';
const BOB_SESSION = '00000000-0000-4000-8000-00000000b001';
const taskId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

const bases: string[] = [];
afterEach(async () => {
  jest.restoreAllMocks();
  for (const base of bases.splice(0)) await rm(base, { recursive: true, force: true });
});

async function setUp(historyConfig: Record<string, unknown> = {}) {
  const base = await mkdtemp(join(tmpdir(), 'oam-history-service-'));
  bases.push(base);
  const config = validateConfig({
    database: { type: 'sqlite', path: join(base, 'agent.sqlite') },
    history: { dir: join(base, 'history'), ...historyConfig },
    workspace: { retention_days: 7 },
  });
  const rows = new MemorySessionsRepository();
  rows.rows.push(Object.assign(new SessionEntity(), { id: ALICE_SESSION, owner: 'alice', createdAt: '2026-12-01T00:00:00.000Z', prelude: null }));
  rows.rows.push(Object.assign(new SessionEntity(), { id: BOB_SESSION, owner: 'bob', createdAt: '2026-12-01T00:00:00.000Z', prelude: null }));
  const workspaces = new FolderWorkspaces(join(base, 'workspaces'));
  const built = buildHistory({ config, workspace: workspaces, sessions: new SessionsService(rows as unknown as SessionsRepository), clock: new ManualClock() });
  const history = built.service;
  /** Runs a Task as TaskExecution does: begin, the work (or the undo), finish. */
  const run = async (task: HistoryTask, work: (root: string) => Promise<void> = async () => undefined) => {
    const begun = await history.begin(task);
    const result = history.isUndo(task.request) ? (await history.undo(begun)).result : (await work(workspaces.root(task.sessionId)), 'done');
    return history.finish(begun, result);
  };
  const file = (sessionId: string, name: string) => readFile(join(workspaces.root(sessionId), name), 'utf8');
  return { base, history, built, workspaces, run, file };
}

describe('HistoryService: checkpoints and diffs', () => {
  it('gives a Task that changed files its diff line and diff; one that changed nothing, neither', async () => {
    const { history, run } = await setUp();
    const changed = await run({ id: taskId(1), sessionId: ALICE_SESSION, owner: 'alice', request: 'write' }, (root) => writeFile(join(root, 'notes.txt'), 'hello\n'));
    expect(changed).toBe(`done\n\ndiff: agent-session://${ALICE_SESSION}/tasks/${taskId(1)}/diff`);
    expect(await run({ id: taskId(2), sessionId: ALICE_SESSION, owner: 'alice', request: 'look' })).toBe('done');
    const { text, changes } = await history.diff(ALICE_SESSION, taskId(1));
    expect(changes.map((change) => [change.path, change.status])).toEqual([['notes.txt', 'added']]);
    expect(text).toContain('diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n');
    expect(text).toContain('+hello');
    expect((await history.timeline(ALICE_SESSION)).map((task) => [task.taskId, !!task.before, !!task.after])).toEqual([
      [taskId(1), true, true],
      [taskId(2), true, true],
    ]);
  });

  it("reads another user's session and a Task it never recorded as the same missing diff", async () => {
    const { history, run } = await setUp();
    await run({ id: taskId(1), sessionId: ALICE_SESSION, owner: 'alice', request: 'write' }, (root) => writeFile(join(root, 'a.txt'), 'a'));
    expect(await history.diffOwned('alice', ALICE_SESSION, taskId(1))).toContain('a.txt');
    const bob = await history.diffOwned('bob', ALICE_SESSION, taskId(1)).catch((error: Error) => error);
    const unknown = await history.diffOwned('alice', ALICE_SESSION, taskId(9)).catch((error: Error) => error);
    expect(bob).toMatchObject({ code: 'resource_not_found', message: `no diff for task ${taskId(1)}` });
    expect(unknown).toMatchObject({ code: 'resource_not_found', message: `no diff for task ${taskId(9)}` });
  });

  it('records the end of a Task whose process stopped mid-run when the next Task begins, and its diff says so', async () => {
    const { history, run, workspaces } = await setUp();
    await history.begin({ id: taskId(1), sessionId: ALICE_SESSION, owner: 'alice', request: 'crashes' });
    await writeFile(join(workspaces.root(ALICE_SESSION), 'half.txt'), 'half done');
    // The process stops here: no finish. The next Task (after a restart) finds the marker.
    await run({ id: taskId(2), sessionId: ALICE_SESSION, owner: 'alice', request: 'next' });
    const { text, changes } = await history.diff(ALICE_SESSION, taskId(1));
    expect(changes.map((change) => change.path)).toEqual(['half.txt']);
    expect(text).toMatch(/^# interrupted: the service stopped while it ran \(.*\); the end checkpoint is the workspace as the next Task found it\n/);
  });
});

describe('HistoryService: undo', () => {
  it('puts back what the last Task changed, traces each path, and refuses a second undo of it', async () => {
    const { history, run, file, built } = await setUp();
    await run({ id: taskId(1), sessionId: ALICE_SESSION, owner: 'alice', request: 'first' }, (root) => writeFile(join(root, 'a.txt'), 'one'));
    await run({ id: taskId(2), sessionId: ALICE_SESSION, owner: 'alice', request: 'second' }, async (root) => {
      await writeFile(join(root, 'a.txt'), 'two');
      await writeFile(join(root, 'b.txt'), 'new');
    });
    const undone = await run({ id: taskId(3), sessionId: ALICE_SESSION, owner: 'alice', request: 'undo' });
    expect(undone).toMatch(new RegExp(`^Undid task ${taskId(2)}: the 2 files it changed are back as they were before it \\("b.txt", "a.txt"\\)\\.\n\ndiff: `));
    expect(await file(ALICE_SESSION, 'a.txt')).toBe('one');
    expect(existsSync(join(built.stores.dir, '..', 'workspaces', ALICE_SESSION, 'b.txt'))).toBe(false);
    expect(built.trace.steps.map((step) => [step.taskId, step.detail])).toEqual([
      [taskId(3), { path: 'b.txt', undoOf: taskId(2) }],
      [taskId(3), { path: 'a.txt', undoOf: taskId(2) }],
    ]);
    await expect(history.checkUndo(ALICE_SESSION, taskId(2))).rejects.toMatchObject({ code: 'invalid_input', message: `Undo refused: task ${taskId(2)} was already undone.` });
    // The next plain undo takes back the Task before it.
    expect(await history.checkUndo(ALICE_SESSION, null)).toEqual({ target: taskId(1), paths: ['a.txt'] });
  });

  it('refuses an undo in a session with no recorded Task, as invalid input', async () => {
    const { history } = await setUp();
    await expect(history.checkUndo(BOB_SESSION, null)).rejects.toMatchObject({ code: 'invalid_input', message: 'Nothing to undo: this session has no recorded Task.' });
  });
});

describe('HistoryService: the history.max_bytes bound', () => {
  it('drops the oldest Tasks down to the low-water mark with one git gc, journals each, and keeps the newest', async () => {
    const { history, run, built } = await setUp({ max_bytes: 2_000_000 });
    const { randomBytes } = await import('node:crypto');
    const gc = jest.spyOn(GitRepository.prototype, 'git');
    const gcRuns = () => gc.mock.calls.filter(([args]) => args[0] === 'gc').length;
    // Each Task rewrites one 350 000-byte file: Task n's start checkpoint holds Task n-1's version.
    const rewrite = (n: number) =>
      run({ id: taskId(n), sessionId: ALICE_SESSION, owner: 'alice', request: `blob ${n}` }, (root) => writeFile(join(root, 'blob.bin'), randomBytes(350_000)));
    for (let n = 1; n <= 5; n++) await rewrite(n);
    expect(gcRuns()).toBe(0);
    // Six versions pass 2 000 000 bytes; down to 1 600 000 (80 %) takes Tasks 1 to 3 (1 alone frees nothing: 2 starts from its version).
    await rewrite(6);
    expect(gcRuns()).toBe(1);
    expect((await history.timeline(ALICE_SESSION)).map((task) => task.taskId)).toEqual([taskId(4), taskId(5), taskId(6)]);
    for (const dropped of [taskId(1), taskId(2), taskId(3)]) {
      expect((await history.diff(ALICE_SESSION, dropped)).text).toContain('# dropped: history.max_bytes (2000000 bytes) reached');
    }
    expect((await built.stores.store(ALICE_SESSION).repo.objectStore()).bytes).toBeLessThanOrEqual(1_600_000);
    // Under the bound again, the next Task drops nothing.
    await rewrite(7);
    expect(gcRuns()).toBe(1);
  });
});

describe('HistoryService: forks and retention', () => {
  it('gives a fork the source workspace as it was at the end of the Task, and refuses a Task without an end checkpoint', async () => {
    const { history, run, file } = await setUp();
    await run({ id: taskId(1), sessionId: ALICE_SESSION, owner: 'alice', request: 'first' }, (root) => writeFile(join(root, 'a.txt'), 'at the fork'));
    await run({ id: taskId(2), sessionId: ALICE_SESSION, owner: 'alice', request: 'later' }, (root) => writeFile(join(root, 'a.txt'), 'after the fork'));
    const fork = '00000000-0000-4000-8000-00000000f001';
    expect(await history.materializeFork(ALICE_SESSION, taskId(1), fork)).toEqual({ notRestorable: [] });
    expect(await file(fork, 'a.txt')).toBe('at the fork');
    await expect(history.materializeFork(ALICE_SESSION, taskId(9), fork)).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('removes the history of a session whose workspace retention removed, and keeps the others', async () => {
    const { run, built, workspaces } = await setUp();
    for (const sessionId of [ALICE_SESSION, BOB_SESSION])
      await run({ id: taskId(sessionId === ALICE_SESSION ? 1 : 2), sessionId, owner: 'alice', request: 'write' }, (root) => writeFile(join(root, 'x'), 'x'));
    workspaces.expired.add(BOB_SESSION);
    await built.retention.sweep();
    expect(existsSync(built.stores.store(ALICE_SESSION).repo.dir)).toBe(true);
    expect(existsSync(built.stores.store(BOB_SESSION).repo.dir)).toBe(false);
  });
});
