/**
 * `npm run bench:start-up`: what a start of the service costs, the bundled entry points (dist/, what `npm start`,
 * `npm run start:stdio` and the e2e suites run) against the compiled modules they are bundled from (build/), in
 * alternating rounds of one run (this machine is shared and noisy: the ratio is the figure, not the milliseconds).
 * The bundles are measured twice: without their V8 code cache (a first start, or one where none can be written) and
 * with it (every later start; ADR 0018).
 *
 * - HTTP: `node main.js` on a fresh SQLite database until its `listening:` line; CPU is the process's user + system
 *   time at that moment (/proc/PID/stat), wall is from spawn to the line.
 * - stdio: `node stdio.js` until it answers an MCP `initialize`, as an MCP client that starts the server sees it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
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

/** `node <entry>` from the repository, with only PATH, NO_COLOR and `env` in its environment. */
const startEntry = (entry: string, env: Record<string, string>) =>
  spawn(process.execPath, [join(ROOT, entry)], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });

/** Starts `node <entry>`, writes `input` to its stdin, and measures it once its output matches `ready`. */
function measureStart(entry: string, env: Record<string, string>, ready: RegExp, input = ''): Promise<Start> {
  const started = process.hrtime.bigint();
  const child = startEntry(entry, env);
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

type Variant = 'modules' | 'cold' | 'cached';
const ENTRY: Record<Variant, string> = { modules: 'build', cold: 'dist', cached: 'dist' };
const BUNDLES = join(ROOT, 'dist', 'bundle');

/** The code caches beside the bundles (dist/bundle/*.cache), which a start writes a few seconds in. */
const caches = () => readdirSync(BUNDLES).filter((name) => name.endsWith('.cache'));
const dropCaches = () => caches().forEach((name) => rmSync(join(BUNDLES, name)));

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'oam-bench-start-'));
  // No Ollama answers there: the service starts anyway and says so, as on a machine where Ollama is not up yet.
  const { file } = await writeConfig('http://127.0.0.1:9', { database: { type: 'sqlite', path: join(dir, 'agent.sqlite') } }, dir);
  const kinds = {
    http: { entry: 'main.js', start: (entry: string) => measureStart(entry, { AGENT_CONFIG: file }, /listening: MCP endpoint/) },
    stdio: { entry: 'stdio.js', start: (entry: string) => measureStart(entry, { AGENT_CONFIG: file }, /"serverInfo"/, INITIALIZE) },
  };
  const rows: string[] = [];
  for (const [kind, { entry, start }] of Object.entries(kinds)) {
    const path = (variant: Variant) => `${ENTRY[variant]}/${entry}`;
    await start(path('modules')); // a first start warms the page cache for all
    const figures: Record<Variant, Start[]> = { modules: [], cold: [], cached: [] };
    for (let round = 0; round < ROUNDS; round++) {
      figures.modules.push(await start(path('modules')));
      dropCaches();
      figures.cold.push(await start(path('cold')));
      await writeCacheOnce(path('cached'), { AGENT_CONFIG: file });
      figures.cached.push(await start(path('cached')));
    }
    const cpu = (variant: Variant) => median(figures[variant].map((f) => f.cpuMs));
    const wall = (variant: Variant) => median(figures[variant].map((f) => f.wallMs));
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    rows.push(
      `| ${kind} | ${cpu('modules').toFixed(0)} | ${cpu('cold').toFixed(0)} | ${cpu('cached').toFixed(0)} | ${ratio(cpu('cold'), cpu('modules'))} | ${ratio(cpu('cached'), cpu('cold'))} | ` +
        `${wall('modules').toFixed(0)} | ${wall('cold').toFixed(0)} | ${wall('cached').toFixed(0)} | ${ratio(wall('cold'), wall('modules'))} | ${ratio(wall('cached'), wall('cold'))} |`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`service start, median of ${ROUNDS} alternating rounds (ms)\n`);
  process.stdout.write(
    '| start | CPU, modules | CPU, bundle | CPU, bundle + cache | bundle / modules | cache / no cache | wall, modules | wall, bundle | wall, bundle + cache | bundle / modules | cache / no cache |\n' +
      '|---|---|---|---|---|---|---|---|---|---|---|\n',
  );
  process.stdout.write(`${rows.join('\n')}\n`);
}

/** A start left running until its bundle's code cache is written (src/entry/run-bundle.ts), unless it is there already. */
async function writeCacheOnce(entry: string, env: Record<string, string>): Promise<void> {
  const prefix = `${basename(entry, '.js')}.cjs.`;
  const written = () => caches().some((file) => file.startsWith(prefix));
  if (written()) return;
  const child = startEntry(entry, env);
  child.stdout.resume(); // its log is not read: drained, so that a full pipe never holds it up
  child.stderr.resume();
  const exited = new Promise((done) => child.once('exit', done));
  for (let waited = 0; !written() && waited < 30_000; waited += 100) await new Promise((done) => setTimeout(done, 100));
  child.kill('SIGTERM');
  await exited;
  if (!written()) throw new Error(`${entry} wrote no code cache within 30 s`);
}

await main();
