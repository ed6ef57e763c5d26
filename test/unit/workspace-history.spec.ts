import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { changeSet, sameFiles, touchedPaths } from '../../src/history/change-set.js';
import { CheckpointStore } from '../../src/history/checkpoint-store.js';
import { renderDiff } from '../../src/history/diff-text.js';
import { GitRepository } from '../../src/history/git-repository.js';
import { restoreCheckpoint } from '../../src/history/workspace-restore.js';
import { quotePath } from '../../src/history/checkpoint-meta.js';
import { undoRequestOf } from '../../src/history/undo-request.js';
import { parseTaskDiffUri } from '../../src/history/history-uri.js';
import type { Clock } from '../../src/common/clock.js';

const BOUNDS = { maxLines: 500, maxChars: 100_000, maxTotalChars: 1_000_000 };
const SESSION = '00000000-0000-4000-8000-000000000001';

describe('workspace history: checkpoints, change sets, diffs, restore', () => {
  let base: string;
  let ws: string;
  let store: CheckpointStore;
  /**
   * Real time plus a jump past the racy window instead of a sleep through it: the files' modification times are
   * real, so the checkpoints compare them with a clock that runs on, however slowly the machine writes them.
   */
  let clock: Clock & { advance(ms: number): void };
  let step = 0;
  const take = (kind: 'before' | 'after') => store.take(ws, { kind, taskId: `00000000-0000-4000-8000-${String(++step).padStart(12, '0')}`, sessionId: SESSION });
  const diffOf = async (a: string, b: string) => {
    const changes = await changeSet(store.repo, a, b);
    const blobs = await store.repo.objects(changes.flatMap((change) => [change.before?.oid, change.after?.oid]).filter((oid): oid is string => !!oid));
    return { changes, text: renderDiff(changes, blobs, BOUNDS) };
  };

  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'oam-history-'));
    ws = join(base, 'ws');
    await mkdir(ws);
    let offset = 0;
    clock = { now: () => Date.now() + offset, advance: (ms) => void (offset += ms) };
    store = new CheckpointStore(new GitRepository(join(base, 'history', 'repo.git')), { maxFiles: 1000, largeFileBytes: 1024 }, clock);
  });
  afterEach(() => rm(base, { recursive: true, force: true }));

  it('records added, changed, deleted, renamed, mode and binary changes, and restores them byte for byte', async () => {
    await writeFile(join(ws, 'a.txt'), 'one\ntwo\nthree\n');
    await writeFile(join(ws, 'b.txt'), 'bee\n');
    await writeFile(join(ws, 'gone.txt'), 'bye\n');
    await writeFile(join(ws, 'moved.txt'), 'same content\n');
    await writeFile(join(ws, 'run.sh'), '#!/bin/sh\n');
    await writeFile(join(ws, 'secret'), 'k\n', { mode: 0o600 });
    await chmod(join(ws, 'secret'), 0o600);
    await mkdir(join(ws, '.git'));
    // What an agent could plant to make a git that looked at the workspace run its code or change bytes.
    const pwned = join(base, 'pwned');
    await writeFile(
      join(ws, '.git', 'config'),
      `[core]\n\tfsmonitor = touch ${pwned}-fsmonitor\n[filter "evil"]\n\tclean = touch ${pwned}-clean\n\tsmudge = touch ${pwned}-smudge\n[diff "evil"]\n\ttextconv = touch ${pwned}-textconv\n`,
    );
    await mkdir(join(ws, '.git', 'hooks'));
    await writeFile(join(ws, '.git', 'hooks', 'post-commit'), `#!/bin/sh\ntouch ${pwned}-hook\n`, { mode: 0o755 });
    await writeFile(join(ws, '.gitattributes'), '* filter=evil diff=evil text eol=crlf working-tree-encoding=UTF-16\n');
    const before = await take('before');

    await writeFile(join(ws, 'a.txt'), 'one\nTWO\nthree\n');
    await writeFile(join(ws, 'b.txt'), 'bee\nsting\n');
    await unlink(join(ws, 'gone.txt'));
    await rm(join(ws, 'moved.txt'));
    await mkdir(join(ws, 'dir with space'));
    await writeFile(join(ws, 'dir with space', 'renamed.txt'), 'same content\n');
    await chmod(join(ws, 'run.sh'), 0o755);
    await chmod(join(ws, 'secret'), 0o640);
    await writeFile(join(ws, 'image.bin'), Buffer.from([0, 1, 2, 255]));
    await writeFile(join(ws, 'big.dat'), Buffer.alloc(4096, 7));
    await symlink('/etc/passwd', join(ws, 'link'));
    await writeFile(join(ws, '.git', 'HEAD'), 'ref: refs/heads/evil\n');
    const after = await take('after');

    const { changes, text } = await diffOf(before.commit, after.commit);
    expect(changes.map((change) => [change.status, change.path])).toEqual(
      [
        ['added', 'big.dat'],
        ['changed', 'a.txt'],
        ['changed', 'b.txt'],
        ['renamed', 'dir with space/renamed.txt'],
        ['deleted', 'gone.txt'],
        ['added', 'image.bin'],
        ['added', 'link'],
        ['mode', 'run.sh'],
        ['mode', 'secret'],
      ].sort((x, y) => (x[1] < y[1] ? -1 : 1)),
    );
    expect(text).toContain('diff --git a/a.txt b/a.txt\nindex ');
    expect(text).toContain('-two\n+TWO\n');
    expect(text).toContain('diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n');
    expect(text).toContain('--- a/gone.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-bye\n');
    expect(text).toContain('rename from moved.txt\nrename to dir with space/renamed.txt\n');
    expect(text).toContain('diff --git a/secret b/secret\nold mode 100600\nnew mode 100640\n');
    expect(text).toContain('Binary files /dev/null and b/image.bin differ (none -> 4 bytes)');
    expect(text).toMatch(/Binary files \/dev\/null and b\/big.dat differ \(none -> 4096 bytes, sha256 [0-9a-f]{64}; large files are recorded by hash/);
    expect(text).toContain('new file mode 120000');
    expect(text).not.toContain('.git/');
    expect((await readdir(base)).filter((name) => name.startsWith('pwned'))).toEqual([]);

    const outcome = await restoreCheckpoint(store.repo, before.commit, ws, touchedPaths(changes));
    expect(outcome.notRestorable).toEqual([]);
    expect(await readFile(join(ws, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(await readFile(join(ws, 'gone.txt'), 'utf8')).toBe('bye\n');
    expect(await readFile(join(ws, 'moved.txt'), 'utf8')).toBe('same content\n');
    expect(await lstat(join(ws, 'dir with space')).catch(() => null)).toBeNull();
    expect(await lstat(join(ws, 'link')).catch(() => null)).toBeNull();
    expect((await stat(join(ws, 'run.sh'))).mode & 0o777).toBe(0o644);
    expect((await stat(join(ws, 'secret'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(ws, '.git', 'HEAD'), 'utf8')).toBe('ref: refs/heads/evil\n');
    expect((await readdir(base)).filter((name) => name.startsWith('pwned'))).toEqual([]);
    expect(await readFile(join(ws, 'a.txt'))).toEqual(Buffer.from('one\ntwo\nthree\n'));
    const again = await take('before');
    expect((await diffOf(before.commit, again.commit)).changes).toEqual([]);
  });

  it('reads only what changed since the previous checkpoint, and restores a whole checkpoint elsewhere', async () => {
    for (let i = 0; i < 50; i++) await writeFile(join(ws, `f${i}.txt`), `file ${i}\n`);
    await symlink('f1.txt', join(ws, 'alias'));
    await writeFile(join(ws, 'é "日本"\n.txt'), 'unicode\n');
    const first = await take('before');
    expect(first.stored).toBe(52);
    clock.advance(2100);
    const second = await take('after');
    expect(second.stored).toBe(52); // the first checkpoint's files were written within the racy window
    await writeFile(join(ws, 'f3.txt'), 'changed\n');
    const third = await take('before');
    expect(third.stored).toBeLessThanOrEqual(1);
    const copy = join(base, 'copy');
    await mkdir(copy);
    await restoreCheckpoint(store.repo, third.commit, copy, 'all');
    expect(await readFile(join(copy, 'f3.txt'), 'utf8')).toBe('changed\n');
    expect(await readlink(join(copy, 'alias'))).toBe('f1.txt');
    expect(await readFile(join(copy, 'é "日本"\n.txt'), 'utf8')).toBe('unicode\n');
  });

  it('takes a checkpoint with one git process, and tells an unchanged workspace by its tree and modes alone', async () => {
    const processes: string[] = [];
    const repo = new GitRepository(join(base, 'history', 'counted.git'));
    const git = repo.git.bind(repo);
    const fastImport = repo.fastImport.bind(repo);
    repo.git = (args, options) => (processes.push(args[0]), git(args, options));
    repo.fastImport = (produce) => (processes.push('fast-import'), fastImport(produce));
    store = new CheckpointStore(repo, { maxFiles: 1000, largeFileBytes: 1024 });
    await writeFile(join(ws, 'a.txt'), 'a\n');
    const first = await take('before');
    const second = await take('after');
    expect(processes).toEqual(['init', 'fast-import', 'fast-import']);
    expect(second.meta.seq).toBe(first.meta.seq + 1);
    expect(sameFiles(first, second)).toBe(true);
    await chmod(join(ws, 'a.txt'), 0o600);
    const third = await take('before');
    expect(processes.slice(3)).toEqual(['fast-import']);
    expect(sameFiles(second, third)).toBe(false); // the same tree, other permission bits
    processes.length = 0;
    expect((await diffOf(second.commit, third.commit)).changes.map((change) => change.status)).toEqual(['mode']);
    expect(processes).toEqual(['cat-file', 'diff-tree', 'ls-tree', 'cat-file']); // both metas, the trees, the bits, the blobs
    await writeFile(join(ws, 'a.txt'), 'b\n');
    processes.length = 0;
    expect(sameFiles(third, await take('after'))).toBe(false);
    expect(processes).toEqual(['fast-import']);
  });

  it('after a crash between a checkpoint and its cache, asks git for the newest checkpoint again', async () => {
    await writeFile(join(ws, 'a.txt'), 'one\n');
    await take('before');
    const cacheFile = join(store.repo.dir, 'oam-stat-cache.json');
    const olderCache = await readFile(cacheFile);
    await writeFile(join(ws, 'a.txt'), 'two\n');
    const lost = await take('after');
    await writeFile(cacheFile, olderCache); // as if the process died before it wrote the cache
    await store.distrustHead();
    await writeFile(join(ws, 'b.txt'), 'bee\n');
    const next = await take('before');
    expect(next.meta.seq).toBe(lost.meta.seq + 1);
    expect((await diffOf(lost.commit, next.commit)).changes.map((change) => [change.status, change.path])).toEqual([['added', 'b.txt']]);
  });

  it('after a crash during a repository’s first checkpoint, asks git too', async () => {
    await store.ensure();
    const cacheFile = join(store.repo.dir, 'oam-stat-cache.json');
    const newRepositoryCache = await readFile(cacheFile);
    await writeFile(join(ws, 'a.txt'), 'one\n');
    const lost = await take('before');
    await writeFile(cacheFile, newRepositoryCache);
    await store.distrustHead();
    expect((await take('after')).meta.seq).toBe(lost.meta.seq + 1);
  });

  it('measures the object store as git count-objects does', async () => {
    for (let i = 0; i < 3; i++) {
      await writeFile(join(ws, `f${i}.txt`), `file ${i}\n`.repeat(1000));
      await take(i % 2 ? 'after' : 'before');
    }
    const counted = await store.repo.text(['count-objects', '-v']);
    const value = (key: string) => Number(new RegExp(`^${key}: (\\d+)$`, 'm').exec(counted)?.[1]);
    const measured = await store.repo.objectStore();
    expect(measured.packs).toBe(value('packs'));
    expect(measured.packs).toBe(3);
    // count-objects rounds each pack and index down to whole KiB.
    expect(Math.abs(measured.bytes - (value('size') + value('size-pack')) * 1024)).toBeLessThan(2 * 1024 * measured.packs);
  });

  it('does not write through a link the workspace planted where a directory was', async () => {
    await mkdir(join(ws, 'sub'));
    await writeFile(join(ws, 'sub', 'x.txt'), 'x\n');
    const before = await take('before');
    const outside = join(base, 'outside');
    await mkdir(outside);
    await rm(join(ws, 'sub'), { recursive: true });
    await symlink(outside, join(ws, 'sub'));
    const after = await take('after');
    const { changes } = await diffOf(before.commit, after.commit);
    await restoreCheckpoint(store.repo, before.commit, ws, touchedPaths(changes));
    expect((await lstat(join(ws, 'sub'))).isDirectory()).toBe(true);
    expect(await readFile(join(ws, 'sub', 'x.txt'), 'utf8')).toBe('x\n');
    expect(await stat(join(outside, 'x.txt')).catch(() => null)).toBeNull();
  });

  it('quotes a path with a control character, a quote or a backslash C-style in the diff, as git does, so a name cannot forge lines (issue 37, S5)', async () => {
    const forged = 'y\n+++ b\u2044INJECTED\n@@ -0,0 +1 @@\n+forged';
    const before = await take('before');
    await writeFile(join(ws, forged), 'real\n');
    await writeFile(join(ws, 'say "hi"\\.txt'), 'quoted\n');
    await writeFile(join(ws, 'plain ⁄ name.txt'), 'plain\n');
    const after = await take('after');
    const { text } = await diffOf(before.commit, after.commit);
    const lines = text.split('\n');
    // One header of each kind per file: a name cannot add a file header or a hunk of its own.
    expect(lines.filter((line) => line.startsWith('+++ '))).toHaveLength(3);
    expect(lines.filter((line) => line.startsWith('@@ '))).toHaveLength(3);
    expect(lines).not.toContain('+++ b\u2044INJECTED');
    expect(lines).not.toContain('+forged');
    expect(text).toContain('diff --git "a/y\\n+++ b\u2044INJECTED\\n@@ -0,0 +1 @@\\n+forged" "b/y\\n+++ b\u2044INJECTED\\n@@ -0,0 +1 @@\\n+forged"');
    expect(text).toContain('+++ "b/y\\n+++ b\u2044INJECTED\\n@@ -0,0 +1 @@\\n+forged"');
    expect(text).toContain('diff --git "a/say \\"hi\\"\\\\.txt" "b/say \\"hi\\"\\\\.txt"');
    expect(text).toContain('diff --git a/plain ⁄ name.txt b/plain ⁄ name.txt');
  });
});

describe('workspace history: requests, URIs and paths', () => {
  it('reads undo requests, and nothing else, as undo', () => {
    expect(undoRequestOf('undo')).toEqual({ kind: 'last' });
    expect(undoRequestOf('  元に戻す \n')).toEqual({ kind: 'last' });
    expect(undoRequestOf('UNDO 0F0E2C55-1C1B-4B1A-9A0B-0C0D0E0F1011')).toEqual({ kind: 'task', taskId: '0f0e2c55-1c1b-4b1a-9a0b-0c0d0e0f1011' });
    expect(undoRequestOf('undo the last refactoring')).toBeNull();
    expect(undoRequestOf('please undo')).toBeNull();
  });

  it('parses only the diff URIs it makes', () => {
    const sessionId = '00000000-0000-4000-8000-000000000001';
    const taskId = '00000000-0000-4000-8000-000000000002';
    expect(parseTaskDiffUri(`agent-session://${sessionId}/tasks/${taskId}/diff`)).toEqual({ sessionId, taskId });
    expect(parseTaskDiffUri(`agent-session://${sessionId}/tasks/${taskId}/diff/x`)).toBeNull();
    expect(parseTaskDiffUri(`agent-session://${sessionId}/files/tasks/${taskId}/diff`)).toBeNull();
    expect(parseTaskDiffUri(`agent-session://../tasks/${taskId}/diff`)).toBeNull();
  });

  it('quotes every path for fast-import, so quotes, newlines and non-ASCII names stay one path', () => {
    expect(quotePath('a b/"c"\\d\n')).toBe('"a b/\\"c\\"\\\\d\\n"');
    expect(quotePath('é')).toBe('"\\303\\251"');
  });
});

// What a checkpoint costs is measured by `npm run bench:history` (10 000 files, 200 MiB, against `git status` of the
// same tree in the same run), not asserted here: a timed assertion fails on a loaded machine and proves nothing on a
// quiet one. This test holds the property that makes it cheap: a later checkpoint reads only the changed files.
describe('workspace history: a later checkpoint stores only what changed', () => {
  it('stores the 10 changed files of 1 000, round after round', async () => {
    const base = await mkdtemp(join(tmpdir(), 'oam-history-cost-'));
    const ws = join(base, 'ws');
    try {
      for (let d = 0; d < 10; d++) await mkdir(join(ws, `d${d}`), { recursive: true });
      await Promise.all(Array.from({ length: 1_000 }, (_, i) => writeFile(join(ws, `d${i % 10}`, `f${i}.txt`), `file ${i}\n`.repeat(20))));
      // Written well before the checkpoint, as between two Tasks: outside the racy window, so their stamps are trusted.
      const earlier = new Date(Date.now() - 60_000);
      await Promise.all(Array.from({ length: 1_000 }, (_, i) => utimes(join(ws, `d${i % 10}`, `f${i}.txt`), earlier, earlier)));
      const store = new CheckpointStore(new GitRepository(join(base, 'history.git')), { maxFiles: 100_000, largeFileBytes: 1 << 24 });
      let n = 0;
      const take = () => store.take(ws, { kind: n % 2 ? 'after' : 'before', taskId: `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`, sessionId: SESSION });
      expect((await take()).stored).toBe(1_000);
      expect((await take()).stored).toBe(0);
      for (let round = 0; round < 3; round++) {
        for (let k = 0; k < 10; k++) await writeFile(join(ws, `d${k}`, `f${k}.txt`), `round ${round}\n`);
        expect((await take()).stored).toBe(10);
      }
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  }, 60_000);
});
