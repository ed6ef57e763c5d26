/**
 * `npm run bench:start-up`: what a start of the service costs, the bundled entry points (dist/, what `npm start`,
 * `npm run start:stdio` and the e2e suites run) against the compiled modules they are bundled from (build/), in
 * alternating rounds of one run (this machine is shared and noisy: the ratio is the figure, not the milliseconds).
 *
 * - HTTP: `node main.js` on a fresh SQLite database until its `listening:` line; CPU is the process's user + system
 *   time at that moment (/proc/PID/stat), wall is from spawn to the line.
 * - stdio: `node stdio.js` until it answers an MCP `initialize`, as an MCP client that starts the server sees it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeConfig } from '../test/support/service-process.js';
import { median } from './measure.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const TICKS_PER_SECOND = 100; // USER_HZ on Linux
const ROOT = join(import.meta.dirname, '..', '..');

interface Start {
  wallMs: number;
  cpuMs: number;
}

/** User + system CPU of a live process, in ms, from /proc (Linux). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Starts `node <entry>`, writes `input` to its stdin, and measures it once its output matches `ready`. */
function measureStart(entry: string, env: Record<string, string>, ready: RegExp, input = ''): Promise<Start> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [join(ROOT, entry)], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(input);
  let output = '';
  let figures: Start | null = null;
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (figures || !ready.test(output)) return;
      figures = { wallMs: Number(process.hrtime.bigint() - started) / 1e6, cpuMs: cpuMs(child.pid!) };
      child.kill('SIGKILL');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => (figures ? resolve(figures) : reject(new Error(`${entry} exited with ${code} before it was ready:\n${output}`))));
  });
}

const INITIALIZE = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } })}\n`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'oam-bench-start-'));
  // No Ollama answers there: the service starts anyway and says so, as on a machine where Ollama is not up yet.
  const { file } = await writeConfig('http://127.0.0.1:9', { database: { type: 'sqlite', path: join(dir, 'agent.sqlite') } }, dir);
  const kinds = {
    http: (entry: string) => measureStart(`${entry}/main.js`, { AGENT_CONFIG: file }, /listening: MCP endpoint/),
    stdio: (entry: string) => measureStart(`${entry}/stdio.js`, { AGENT_CONFIG: file }, /"serverInfo"/, INITIALIZE),
  };
  const rows: string[] = [];
  for (const [kind, start] of Object.entries(kinds)) {
    const figures: Record<'build' | 'dist', Start[]> = { build: [], dist: [] };
    await start('dist'); // a first start warms the page cache for both
    for (let round = 0; round < ROUNDS; round++) for (const entry of ['build', 'dist'] as const) figures[entry].push(await start(entry));
    const cpu = (entry: 'build' | 'dist') => median(figures[entry].map((f) => f.cpuMs));
    const wall = (entry: 'build' | 'dist') => median(figures[entry].map((f) => f.wallMs));
    rows.push(
      `| ${kind} | ${cpu('build').toFixed(0)} | ${cpu('dist').toFixed(0)} | ${(cpu('dist') / cpu('build')).toFixed(2)} | ${wall('build').toFixed(0)} | ${wall('dist').toFixed(0)} | ${(wall('dist') / wall('build')).toFixed(2)} |`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`service start, median of ${ROUNDS} alternating rounds (ms; ratio = bundled / modules)\n`);
  process.stdout.write('| start | CPU, modules (build/) | CPU, bundled (dist/) | ratio | wall, modules | wall, bundled | ratio |\n|---|---|---|---|---|---|---|\n');
  process.stdout.write(`${rows.join('\n')}\n`);
}

await main();
