/**
 * `npm run bench:history`: what a workspace checkpoint (issue 24) costs for 10 000 files / 200 MB. The
 * first checkpoint reads everything; later ones, with 10 files changed, read only those. Each figure
 * is set against a baseline measured in the same run on the same tree: a plain `git status` of a
 * git repository of the same files (an index-based stat walk), and the history repository's disk size.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore } from '../src/history/checkpoint-store.js';
import { GitRepository } from '../src/history/git-repository.js';

const FILES = 10_000;
const BYTES = 200 * 1024 * 1024;
const ROUNDS = 5;
const SESSION = '00000000-0000-4000-8000-000000000000';

const base = mkdtempSync(join(tmpdir(), 'oam-bench-history-'));
const ws = join(base, 'ws');
const size = Math.floor(BYTES / FILES);
for (let i = 0; i < FILES; i++) {
  const dir = join(ws, `d${i % 100}`);
  if (i < 100) mkdirSync(dir, { recursive: true });
  // Random-ish bytes so compression does not flatter the figure.
  const chunk = Buffer.alloc(size);
  for (let j = 0; j + 4 <= size; j += 4) chunk.writeUInt32LE((i * 2654435761 + j * 40503) >>> 0, j);
  writeFileSync(join(dir, `f${i}.bin`), chunk);
}
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const store = new CheckpointStore(new GitRepository(join(base, 'history.git')), { maxFiles: 1_000_000, largeFileBytes: 16 * 1024 * 1024 });
let n = 0;
const take = () => store.take(ws, { kind: n % 2 === 0 ? 'before' : 'after', taskId: `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`, sessionId: SESSION });

let start = process.hrtime.bigint();
await take();
const first = ms(start);
await new Promise((resolve) => setTimeout(resolve, 2100)); // past the racy window, as between two Tasks
await take();

const plain = join(base, 'plain.git');
execFileSync('git', ['init', '-q', '--bare', plain]);
const git = (args: string[]) =>
  execFileSync('git', ['--git-dir', plain, '--work-tree', ws, ...args], {
    env: { PATH: '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    maxBuffer: 1 << 28,
  });
git(['add', '-A']);
git(['status', '--porcelain']);

const checkpoints: number[] = [];
const statuses: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < 10; k++) writeFileSync(join(ws, `d${k}`, `f${k}.bin`), `round ${round} file ${k}\n`);
  start = process.hrtime.bigint();
  await take();
  checkpoints.push(ms(start));
  start = process.hrtime.bigint();
  git(['status', '--porcelain']);
  statuses.push(ms(start));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// A Task's two checkpoints on a small workspace where nothing changed (a Task that only answers): what each git
// process costs dominates there, so the figure is set against one bare git process measured in the same run.
const small = join(base, 'small');
mkdirSync(small);
for (let i = 0; i < 10; i++) writeFileSync(join(small, `f${i}.txt`), `small file ${i}\n`);
const smallRepo = new GitRepository(join(base, 'small.git'));
let smallProcesses = 0;
const run = smallRepo.git.bind(smallRepo);
const fastImport = smallRepo.fastImport.bind(smallRepo);
smallRepo.git = (args, options) => (smallProcesses++, run(args, options));
smallRepo.fastImport = (produce) => (smallProcesses++, fastImport(produce));
const smallStore = new CheckpointStore(smallRepo, { maxFiles: 1000, largeFileBytes: 1 << 24 });
let task = 0;
const pairs: number[] = [];
const bare: number[] = [];
for (let round = 0; round < 4 * ROUNDS; round++) {
  const taskId = `00000000-0000-4000-9000-${String(++task).padStart(12, '0')}`;
  if (round === 1) smallProcesses = 0; // the first round creates the repository
  start = process.hrtime.bigint();
  await smallStore.take(small, { kind: 'before', taskId, sessionId: SESSION });
  await smallStore.take(small, { kind: 'after', taskId, sessionId: SESSION });
  pairs.push(ms(start));
  start = process.hrtime.bigint();
  execFileSync('git', ['--version']);
  bare.push(ms(start));
}
const pairProcesses = smallProcesses / (4 * ROUNDS - 1);
const du = (path: string) => Number(execFileSync('du', ['-sb', path]).toString().split('\t')[0]);
const history = du(join(base, 'history.git'));
const workspace = du(ws);
process.stdout.write(
  [
    `workspace: ${FILES} files, ${(workspace / 1048576).toFixed(0)} MiB`,
    `first checkpoint (reads every file): ${first.toFixed(0)} ms`,
    `checkpoint with 10 files changed: median ${median(checkpoints).toFixed(0)} ms of ${ROUNDS} (${checkpoints.map((v) => v.toFixed(0)).join(', ')})`,
    `baseline git status --porcelain, same tree: median ${median(statuses).toFixed(0)} ms; ratio ${(median(checkpoints) / median(statuses)).toFixed(2)}x`,
    `a Task's two checkpoints, 10 files, none changed: median ${median(pairs).toFixed(1)} ms, ${pairProcesses} git processes; baseline one bare git process: median ${median(bare).toFixed(1)} ms; ratio ${(median(pairs) / median(bare)).toFixed(2)}x`,
    `history disk after ${n} checkpoints: ${(history / 1048576).toFixed(1)} MiB (${((history / workspace) * 100).toFixed(0)}% of the workspace)`,
  ].join('\n') + '\n',
);
rmSync(base, { recursive: true, force: true });
