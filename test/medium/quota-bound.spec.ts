import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../src/config/agent-config.js';
import { WorkspaceFiles } from '../../src/workspace/workspace-files.js';
import type { WorkspacePaths } from '../../src/workspace/workspace-paths.js';
import { WorkspaceService } from '../../src/workspace/workspace.service.js';

/**
 * Issue 37: the session quota is a bound, not a report. Each command runs in the bubblewrap sandbox
 * against a real session workspace; what a command creates past a limit is taken back when it ends, so
 * the next command finds the workspace within its limits, and an over-limit workspace never grows.
 */
const MiB = 1024 * 1024;
const base = mkdtempSync(join(tmpdir(), 'oam-quota-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

let service: WorkspaceService;
beforeAll(async () => {
  const config = validateConfig({ workspace: { root: base, sandbox: 'bubblewrap', max_session_bytes: MiB, max_session_files: 100 } });
  service = new WorkspaceService(config, new WorkspaceFiles());
  await service.onModuleInit();
});

const session = () => service.forTask(randomUUID());
const run = (paths: WorkspacePaths, command: string) => service.run(paths, command, new AbortController().signal);

describe('workspace.max_session_bytes holds while commands run', () => {
  it('takes back the files of a command that wrote past the quota: the next command cannot add one', async () => {
    const paths = await session();
    writeFileSync(join(paths.root, 'kept.txt'), 'written before');
    // Two files of 800 KB: each fits in the room left (RLIMIT_FSIZE), the two together do not.
    const over = await run(paths, 'head -c 800000 /dev/zero > a.bin; head -c 800000 /dev/zero > b.bin; echo wrote');
    expect(over.stdout).toBe('wrote\n');
    expect(over.overLimit).toMatch(/would hold 1600\d+ bytes, more than its quota of 1048576 bytes .*; the 2 files and directories this command created were removed/);
    expect(readdirSync(paths.root).sort()).toEqual(['kept.txt']);
    const next = await run(paths, 'echo small > one-more.txt; echo done');
    expect(next.overLimit).toBeNull();
    expect(readdirSync(paths.root).sort()).toEqual(['kept.txt', 'one-more.txt']);
  });

  it('lets a command delete while the workspace is over its quota, never grow', async () => {
    const paths = await session();
    // Over the quota before any command of this Task (files the service wrote, or a lower quota now).
    writeFileSync(join(paths.root, 'big.bin'), Buffer.alloc(MiB + 10));
    const grow = await run(paths, 'touch empty; mkdir dir; ln -s big.bin link; echo tried');
    expect(grow.overLimit).toMatch(/while it is over, a command may only delete files/);
    expect(readdirSync(paths.root)).toEqual(['big.bin']);
    const clean = await run(paths, 'rm big.bin');
    expect(clean.overLimit).toBeNull();
    expect(existsSync(join(paths.root, 'big.bin'))).toBe(false);
  });

  it('lets a clean-up in several steps run to its end while the workspace is over (no watch stops it halfway)', async () => {
    const paths = await session();
    for (const name of ['a', 'b', 'c', 'd']) writeFileSync(join(paths.root, `${name}.bin`), Buffer.alloc(400_000));
    const clean = await run(paths, 'rm a.bin; sleep 2; rm b.bin; sleep 2; rm c.bin; echo cleaned');
    expect(clean.stdout).toBe('cleaned\n');
    expect(clean.overLimit).toBeNull();
    expect(readdirSync(paths.root)).toEqual(['d.bin']);
  }, 30_000);
});

describe('workspace.max_session_files holds while commands run', () => {
  it('takes back the 400 files of one command, so the next cannot add a 401st', async () => {
    const paths = await session();
    const many = await run(paths, 'mkdir many && cd many && touch $(seq 1 400) && echo made');
    expect(many.stdout).toBe('made\n');
    expect(many.overLimit).toMatch(/more than its limit of 100 \(workspace.max_session_files\); .*the 401 files and directories this command created were removed/);
    expect(readdirSync(paths.root)).toEqual([]);
    const next = await run(paths, 'touch one && echo ok');
    expect(next.overLimit).toBeNull();
    expect(readdirSync(paths.root)).toEqual(['one']);
  });

  it('keeps what existed before: a file moved into a directory the command made stays', async () => {
    const paths = await session();
    writeFileSync(join(paths.root, 'precious.txt'), 'keep me');
    const moved = await run(paths, 'mkdir d && mv precious.txt d/ && mkdir e && cd e && touch $(seq 1 200)');
    expect(moved.overLimit).not.toBeNull();
    expect(readdirSync(paths.root)).toEqual(['d']);
    expect(readdirSync(join(paths.root, 'd'))).toEqual(['precious.txt']);
  });
});

describe('a command cannot make a hard link (ADR 0038)', () => {
  it('fails link(2) with EXDEV, so no new name of an old file escapes the quota; a copy still works', async () => {
    const paths = await session();
    writeFileSync(join(paths.root, 'old.bin'), Buffer.alloc(400_000));
    const linked = await run(paths, 'ln old.bin hard; echo "ln=$?"; cp old.bin one; cp old.bin two; echo "cp=$?"');
    expect(linked.stdout).toBe('ln=1\ncp=0\n');
    expect(linked.stderr).toMatch(/Invalid cross-device link/);
    // Copies are new files: past the quota they are taken back like any other.
    expect(linked.overLimit).toMatch(/the 2 files and directories this command created were removed/);
    expect(readdirSync(paths.root)).toEqual(['old.bin']);
  });

  it('fails linkat(2) through another tool too (python os.link), and leaves symbolic links alone', async () => {
    const paths = await session();
    writeFileSync(join(paths.root, 'old.txt'), 'x');
    const linked = await run(
      paths,
      `python3 -c "import os
try:
    os.link('old.txt', 'hard')
except OSError as e:
    print(e.errno)" ; ln -s old.txt soft && echo soft`,
    );
    expect(linked.stdout).toBe('18\nsoft\n');
    expect(readdirSync(paths.root).sort()).toEqual(['old.txt', 'soft']);
  });

  it('leaves no io_uring to link through (its LINKAT runs past seccomp): io_uring_setup fails with ENOSYS, as on a kernel without it', async () => {
    const paths = await session();
    const setup = await run(
      paths,
      `python3 -c "import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.syscall(425, 1, ctypes.create_string_buffer(120)), ctypes.get_errno())"`,
    );
    expect(setup.stdout).toBe('-1 38\n');
  });
});

/**
 * ADR 0038: the limits hold while a command runs, and what it grew is taken back too. A command that would
 * otherwise run on past a limit ends with `sleep`: if the watch does not stop it, it prints `finished`.
 */
describe('the quota holds while a command runs (ADR 0038)', () => {
  const size = (paths: WorkspacePaths) =>
    readdirSync(paths.root, { recursive: true, withFileTypes: true }).reduce((sum, entry) => sum + (entry.isFile() ? statSync(join(entry.parentPath, entry.name)).size : 0), 0);

  it('bounds one new file of 1.6 MB to the room left and says why', async () => {
    const paths = await session();
    const big = await run(paths, 'head -c 1600000 /dev/zero > new.bin; echo "rc=$?"');
    expect(big.stdout).toBe('rc=153\n');
    expect(big.stderr).toMatch(/\[a file reached the most one file may hold now: 1048576 bytes/);
    expect(size(paths)).toBeLessThanOrEqual(MiB);
  });

  it('bounds an append of 1.6 MB to a file that existed before', async () => {
    const paths = await session();
    writeFileSync(join(paths.root, 'old.log'), 'x'.repeat(1000));
    const big = await run(paths, 'head -c 1600000 /dev/zero >> old.log; echo "rc=$?"');
    expect(big.stdout).toBe('rc=153\n');
    expect(big.stderr).toMatch(/\[a file reached the most one file may hold now: 1047576 bytes/);
    expect(size(paths)).toBeLessThanOrEqual(MiB);
  });

  it('stops a command whose appends to several old files pass the quota, and cuts them back', async () => {
    const paths = await session();
    for (const name of ['a', 'b', 'c', 'd']) writeFileSync(join(paths.root, name), `${name} before\n`);
    // Each append fits in the room left (RLIMIT_FSIZE); four of them are 1.6 MB.
    const grow = await run(paths, 'for f in a b c d; do head -c 400000 /dev/zero >> $f; done; sleep 30; echo finished');
    expect(grow.stdout).toBe('');
    expect(grow.timedOut).toBe(false);
    expect(grow.cancelled).toBe(false);
    expect(grow.overLimit).toMatch(
      /^the session workspace would hold \d+ bytes, more than its quota of 1048576 bytes .*; the \d files that existed before and grew were cut back to their size before the command; the command was stopped while it ran, once the workspace held more than a limit$/,
    );
    for (const name of ['a', 'b', 'c', 'd']) expect(readFileSync(join(paths.root, name), 'utf8')).toBe(`${name} before\n`);
  }, 60_000);

  it('counts files a file tool wrote at their size: appending to them within the quota is not stopped', async () => {
    const paths = await session();
    // 600 KB written by the tool; counted as if all new, the appends below would seem to take the workspace to 1.2 MB.
    for (const name of ['t1', 't2', 't3']) await service.files.writeFile(paths, name, Buffer.alloc(200_000));
    const grow = await run(paths, 'for f in t1 t2 t3; do head -c 1000 /dev/zero >> $f; done; sleep 3; echo done');
    expect(grow.stdout).toBe('done\n');
    expect(grow.overLimit).toBeNull();
  }, 30_000);

  it('stops a command writing several new files, each under the room left, and takes them back', async () => {
    const paths = await session();
    const many = await run(paths, 'for i in $(seq 1 16); do head -c 100000 /dev/zero > f$i; done; sleep 30; echo finished');
    expect(many.stdout).toBe('');
    expect(many.overLimit).toMatch(
      /^the session workspace would hold \d+ bytes, .*; the \d+ files and directories this command created were removed; the command was stopped while it ran, once the workspace held more than a limit$/,
    );
    expect(readdirSync(paths.root)).toEqual([]);
  }, 60_000);

  it('stops a command making 400 files past workspace.max_session_files 100', async () => {
    const paths = await session();
    const many = await run(paths, 'mkdir m && for i in $(seq 1 400); do : > m/$i; done; sleep 30; echo finished');
    expect(many.stdout).toBe('');
    expect(many.overLimit).toMatch(
      /^the session workspace would hold (101|more than 100) files and directories, more than its limit of 100 .*; the command was stopped while it ran/,
    );
    expect(readdirSync(paths.root)).toEqual([]);
  }, 60_000);
});
