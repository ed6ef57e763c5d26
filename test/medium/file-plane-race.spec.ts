import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceFiles } from '../../src/workspace/workspace-files.js';
import { WorkspacePaths } from '../../src/workspace/workspace-paths.js';
import { startSwapper } from '../support/swap-race.js';

const SECONDS = Number(process.env.OAM_RACE_SECONDS ?? 3);
const SECRET = 'outside secret: must never come back';

/**
 * Issue 20 finding 1: a command swaps a directory `d` with a link `d -> <outside>` (atomic rename
 * exchange) while the service reads, lists, sizes, searches and writes `d/...`. Nothing of outside
 * may ever come back, and nothing may be written there.
 */
describe('the file plane against a command swapping a directory for a link (issue 20, finding 1)', () => {
  const base = mkdtempSync(join(tmpdir(), 'oam-race-'));
  const root = join(base, 'ws');
  const outside = join(base, 'outside');
  const files = new WorkspaceFiles();
  let paths: WorkspacePaths;

  beforeAll(async () => {
    mkdirSync(join(root, 'd'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(root, 'd', 'passwd'), 'inside\n');
    writeFileSync(join(outside, 'passwd'), `${SECRET}\n`);
    symlinkSync(outside, join(root, 'l'));
    paths = await WorkspacePaths.open(root);
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  it(`never returns or touches anything outside the workspace during ${SECONDS} s of swaps`, async () => {
    const swapper = startSwapper(root, 'd', 'l', SECONDS);
    const seen = { inside: 0, refused: 0, leaked: 0, swaps: 0 };
    const leak = (text: string | null | undefined) => {
      if (text?.includes('outside secret')) seen.leaked += 1;
    };
    const until = Date.now() + SECONDS * 1000;
    while (Date.now() < until) {
      const results = await Promise.allSettled([
        files.readBytes(paths, 'd/passwd', 1024).then((bytes) => bytes.toString()),
        files.readFile(paths, 'd/passwd'),
        files.grep(paths, 'secret', 'd'),
        files.listDir(paths, 'd'),
        files.writeFile(paths, 'd/written.txt', 'from the service\n').then(() => 'written'),
      ]);
      for (const result of results) {
        if (result.status === 'fulfilled') {
          leak(result.value);
          if (result.value.includes('inside')) seen.inside += 1;
        } else {
          leak((result.reason as Error).message);
          seen.refused += 1;
        }
      }
    }
    seen.swaps = await swapper.done;
    expect(seen.swaps).toBeGreaterThan(1000);
    expect(seen.leaked).toBe(0);
    expect(existsSync(join(outside, 'written.txt'))).toBe(false);
    expect(readFileSync(join(outside, 'passwd'), 'utf8')).toBe(`${SECRET}\n`);
    // The reads did happen, and mostly succeeded: the test raced, it did not just fail everything.
    expect(seen.inside).toBeGreaterThan(10);
  });

  it('answers reads, sizes and listings of FIFOs as "not found" at once, and file writes go on (issue 20, finding 2)', async () => {
    const fifos = ['p1.txt', 'p2.txt', 'p3.txt', 'p4.txt', 'p5.txt'];
    execFileSync(
      'mkfifo',
      fifos.map((name) => join(root, name)),
    );
    // The deadline goes with the answer: a timer left pending kept the Jest worker alive past the run's end.
    const within = <T>(ms: number, promise: Promise<T>) => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)));
      return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
    };
    const reads = await within(3000, Promise.allSettled(fifos.flatMap((name) => [files.readBytes(paths, name, 1024), files.readFile(paths, name)])));
    expect(reads.map((result) => result.status === 'rejected' && (result.reason as Error).message)).toEqual(
      fifos.flatMap((name) => [`${name}: not a regular file`, `${name}: not a regular file`]),
    );
    expect(await within(3000, Promise.all(fifos.map((name) => files.sizeOf(paths, name))))).toEqual([null, null, null, null, null]);
    expect(await within(3000, files.grep(paths, 'x', '.'))).toBe('no matches');
    expect(await within(3000, files.writeFile(paths, 'after.txt', 'still writable\n'))).toMatchObject({ path: 'after.txt', created: true });
  });
});
