import { afterAll, describe, expect, it } from '@jest/globals';
import { appendFileSync, mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QuotaWatch } from '../../src/workspace/quota-watch.js';
import { WorkspacePaths } from '../../src/workspace/workspace-paths.js';
import { usageOf } from '../../src/workspace/workspace-usage.js';

const made: string[] = [];
const watches: (QuotaWatch | null)[] = [];
afterAll(async () => {
  for (const watch of watches) await watch?.close();
  await Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('the quota watch (ADR 0038) while a command swaps a directory for a link', () => {
  it('measures a path an event named inside the workspace only, never through a link to a file outside', async () => {
    const [root, outside] = [await mkdtemp(join(tmpdir(), 'oam-qw-')), await mkdtemp(join(tmpdir(), 'oam-qw-out-'))];
    made.push(root, outside);
    // A file the service user can read and the sandbox cannot: its size must not reach the tally (an oracle otherwise).
    writeFileSync(join(outside, 'x'), Buffer.alloc(5_000_000));
    mkdirSync(join(root, 'd'));
    writeFileSync(join(root, 'd', 'x'), 'small');
    const paths = await WorkspacePaths.open(root, 1_000_000, null);
    let stop!: (why: string) => void;
    const stopped = new Promise<string>((resolve) => (stop = resolve));
    const watch = await QuotaWatch.start(paths, await usageOf(paths), stop);
    expect(watch).not.toBeNull();
    // The command: an event for d/x, then d swapped for a link out, then a write that passes the quota for real.
    appendFileSync(join(root, 'd', 'x'), '!');
    renameSync(join(root, 'd'), join(root, 'moved'));
    symlinkSync(outside, join(root, 'd'));
    writeFileSync(join(root, 'big'), Buffer.alloc(1_200_000));
    const why = await stopped;
    await watch!.close();
    const held = Number(/holds (\d+) bytes/.exec(why)?.[1]);
    expect(held).toBeGreaterThan(1_000_000);
    expect(held).toBeLessThan(5_000_000);
  });

  it('counts a file whose name starts with two dots (path.relative gives "..x" for it, which is still inside)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'oam-qw-'));
    made.push(root);
    const paths = await WorkspacePaths.open(root, 1_000_000, null);
    let stop!: (why: string) => void;
    const stopped = new Promise<string>((resolve) => (stop = resolve));
    const watch = await QuotaWatch.start(paths, await usageOf(paths), stop);
    watches.push(watch);
    // Each under the quota, together past it: a watch blind to the first never stops the command (the test times out).
    writeFileSync(join(root, '..hidden'), Buffer.alloc(600_000));
    writeFileSync(join(root, 'seen'), Buffer.alloc(600_000));
    const why = await stopped;
    await watch!.close();
    expect(why).toMatch(/holds 1200000 bytes/);
  }, 10_000);
});
