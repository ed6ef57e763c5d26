/**
 * `npm run bench:quota`: what the session quota costs a command (ADR 0025, ADR 0038) on a workspace of
 * 20 000 files in 200 directories. The same `true` runs through the WorkspaceService, in turns, in two
 * services over the same tree: one with no limit (the baseline: the sandbox and the usage walk after every
 * command, which are there either way) and one with `max_session_bytes` and `max_session_files` set (adds
 * the file-clock reading, the marks of the usage walk and the watch that keeps the quota a bound while the
 * command runs). Prints each median and their ratio; no figure is compared with a constant. On a busy machine
 * the two commands' medians drown the difference, so what the quota adds is also timed alone, against the
 * usage walk every command already makes, in turns: the watch's set-up and close (BENCH_PARTS=0 skips it on
 * code without quota-watch.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../src/config/agent-config.js';
import { WorkspaceFiles } from '../src/workspace/workspace-files.js';
import { WorkspacePaths } from '../src/workspace/workspace-paths.js';
import { WorkspaceService } from '../src/workspace/workspace.service.js';
import { median } from './measure.js';

const DIRS = 200;
const FILES_PER_DIR = 100;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const GiB = 1024 * 1024 * 1024;

const base = mkdtempSync(join(tmpdir(), 'oam-bench-quota-'));
const ws = join(base, 'ws');
for (let d = 0; d < DIRS; d++) {
  mkdirSync(join(ws, `d${d}`), { recursive: true });
  for (let f = 0; f < FILES_PER_DIR; f++) writeFileSync(join(ws, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
}

async function service(limits: Record<string, number>): Promise<WorkspaceService> {
  const config = validateConfig({ workspace: { root: join(base, 'root'), sandbox: 'bubblewrap', isolation: 'shared', ...limits } });
  const workspace = new WorkspaceService(config, new WorkspaceFiles());
  await workspace.onModuleInit();
  return workspace;
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

const plain = await service({});
const quota = await service({ max_session_bytes: GiB, max_session_files: 1_000_000 });
const timings = { plain: [] as number[], quota: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, workspace, limits] of [
    ['plain', plain, [null, null]],
    ['quota', quota, [GiB, 1_000_000]],
  ] as const) {
    // A fresh WorkspacePaths per command, as each Task gets: its usage is measured once, then after the command.
    const paths = await WorkspacePaths.open(ws, limits[0], limits[1]);
    const start = process.hrtime.bigint();
    const result = await workspace.run(paths, 'true', new AbortController().signal);
    if (result.exitCode !== 0) throw new Error(`true failed: ${result.stderr}`);
    timings[name].push(ms(start));
  }
}
const [p, q] = [median(timings.plain), median(timings.quota)];
console.log(`workspace: ${DIRS * FILES_PER_DIR + DIRS} entries; ${ROUNDS} rounds, medians`);
console.log(`command without a limit (baseline): ${p.toFixed(1)} ms`);
console.log(`command with the quota: ${q.toFixed(1)} ms`);
console.log(`ratio quota / baseline: ${(q / p).toFixed(3)}`);

if (process.env.BENCH_PARTS !== '0') {
  const { measureUsage } = await import('../src/workspace/workspace-usage.js');
  const { QuotaWatch } = await import('../src/workspace/quota-watch.js');
  const parts = { walk: [] as number[], watch: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    let start = process.hrtime.bigint();
    const usage = await measureUsage(ws);
    parts.walk.push(ms(start));
    const paths = await WorkspacePaths.open(ws, GiB, 1_000_000);
    start = process.hrtime.bigint();
    const watch = await QuotaWatch.start(paths, usage, () => undefined);
    if (!watch) throw new Error('the watch could not start (inotify watches?)');
    await watch.close();
    parts.watch.push(ms(start));
  }
  const [walk, watch] = [median(parts.walk), median(parts.watch)];
  console.log(`usage walk (made before and after every command either way): ${walk.toFixed(1)} ms`);
  console.log(`quota watch set-up and close: ${watch.toFixed(1)} ms; ratio watch / walk: ${(watch / walk).toFixed(3)}`);
}
rmSync(base, { recursive: true, force: true });
