import { afterAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceFiles } from '../../src/workspace/workspace-files.js';
import { WorkspacePaths } from '../../src/workspace/workspace-paths.js';
import { startSwapper } from '../support/swap-race.js';

/** Bounded: OAM_SOAK_SECONDS (default 30) for each case. */
const SECONDS = Number(process.env.OAM_SOAK_SECONDS ?? 30);

/**
 * Issue 20, findings 1 and 2, for longer than the e2e/medium runs: two swappers exchange directories
 * with links to an outside tree (one a link to a FIFO-filled directory) while every reader of the file
 * plane runs flat out. Nothing outside may come back, no read may hang, and a write must still go
 * through at the end.
 */
describe('file plane soak: rename-exchange races and FIFOs', () => {
  const base = mkdtempSync(join(tmpdir(), 'oam-soak-fp-'));
  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it(`holds for ${SECONDS} s`, async () => {
    const root = join(base, 'ws');
    const outside = join(base, 'outside');
    mkdirSync(join(root, 'd', 'sub'), { recursive: true });
    mkdirSync(join(root, 'e'));
    mkdirSync(join(outside, 'sub'), { recursive: true });
    writeFileSync(join(root, 'd', 'sub', 'f.txt'), 'inside\n');
    writeFileSync(join(outside, 'sub', 'f.txt'), 'OUTSIDE\n');
    execFileSync('mkfifo', [join(outside, 'sub', 'fifo.txt'), join(root, 'e', 'fifo.txt')]);
    symlinkSync(outside, join(root, 'l'));
    symlinkSync(join(outside, 'sub'), join(root, 'm'));
    const paths = await WorkspacePaths.open(root);
    const files = new WorkspaceFiles();
    const swappers = [startSwapper(root, 'd', 'l', SECONDS), startSwapper(root, 'e', 'm', SECONDS)];
    let leaked = 0;
    let rounds = 0;
    let slowest = 0;
    for (const until = Date.now() + SECONDS * 1000; Date.now() < until; rounds++) {
      const started = Date.now();
      const results = await Promise.allSettled([
        files.readBytes(paths, 'd/sub/f.txt', 1024).then(String),
        files.readText(paths, 'e/fifo.txt'),
        files.readText(paths, 'e/f.txt'),
        files.listDir(paths, 'd/sub'),
        files.grep(paths, 'OUTSIDE|inside', '.'),
        files.glob(paths, '**/*.txt'),
        files.sizeOf(paths, 'e/fifo.txt').then(String),
      ]);
      slowest = Math.max(slowest, Date.now() - started);
      for (const result of results) if (result.status === 'fulfilled' && result.value.includes('OUTSIDE')) leaked += 1;
    }
    for (const swapper of swappers) expect(await swapper.done).toBeGreaterThan(1000);
    expect(leaked).toBe(0);
    expect(rounds).toBeGreaterThan(100);
    // No round may wait on a FIFO: far under the 15 s bound of a file operation.
    expect(slowest).toBeLessThan(5000);
    expect(await files.writeFile(paths, 'after.txt', 'done\n')).toMatchObject({ created: true });
  });
});
