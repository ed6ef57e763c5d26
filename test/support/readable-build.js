// The unprivileged user (`nobody`) must be able to read dist/, node_modules/, public/ and package.json to run the
// service. A checkout in a folder others cannot enter (a clone under /root, a mktemp -d folder: mode 0700) does not
// allow that, so then the global setup copies them once into a world-readable temporary folder (node_modules as
// hard links: no data is copied) and names it in OAM_TEST_READABLE_ROOT for the workers (test/support/service-process.ts).
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const KEY = 'OAM_TEST_READABLE_ROOT';

/** Whether every folder from `dir` up to / lets other users through (the x bit for others). */
function othersCanEnter(dir) {
  for (let current = dir; ; current = dirname(current)) {
    if ((statSync(current).mode & 0o001) === 0) return false;
    if (current === dirname(current)) return true;
  }
}

export function prepareReadableBuild() {
  if (process.getuid?.() !== 0 || process.env[KEY] || othersCanEnter(ROOT)) return;
  const copy = mkdtempSync(join(tmpdir(), 'oam-build-'));
  chmodSync(copy, 0o755);
  for (const name of ['package.json', 'public', 'dist']) cpSync(join(ROOT, name), join(copy, name), { recursive: true });
  try {
    execFileSync('cp', ['-al', join(ROOT, 'node_modules'), join(copy, 'node_modules')]);
  } catch {
    // Another file system: a real copy.
    cpSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), { recursive: true, verbatimSymlinks: true });
  }
  // Only the copies: the hard links share their modes with the checkout's node_modules, which stay as they are.
  execFileSync('chmod', ['-R', 'o+rX', join(copy, 'package.json'), join(copy, 'public'), join(copy, 'dist')]);
  process.env[KEY] = copy;
}

export function removeReadableBuild() {
  const copy = process.env[KEY];
  if (copy?.startsWith(join(tmpdir(), 'oam-build-'))) rmSync(copy, { recursive: true, force: true });
}
