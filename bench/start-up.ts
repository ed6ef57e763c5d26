/**
 * `npm run bench:start-up`: what a start of the service costs, the bundled entry points (dist/, what `npm start`,
 * `npm run start:stdio` and the e2e suites run) against the compiled modules they are bundled from (build/), in
 * alternating rounds of one run (this machine is shared and noisy: the ratio is the figure, not the milliseconds).
 * The bundles are measured without their V8 code cache (a first start, or one where none can be written) and with it
 * (every later start; ADR 0018), each also as it would be without the ASCII plugin (ADR 0019), and against Node's own
 * compile cache (VARIANTS below). Run it with each supported Node (`node dist-tools/bench/start-up.js` after
 * `npm run build:tools`; ADR 0043 has the figures for 20 and 24).
 *
 * - HTTP: `node main.js` on a fresh SQLite database until its `listening:` line; CPU is the process's user + system
 *   time at that moment (/proc/PID/stat), wall is from spawn to the line.
 * - stdio: `node stdio.js` until it answers an MCP `initialize`, as an MCP client that starts the server sees it.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeConfig } from '../test/support/service-process.js';
import { cpuMs, median } from './measure.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const ROOT = join(import.meta.dirname, '..', '..');

interface Start {
  wallMs: number;
  cpuMs: number;
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

/**
 * What a start runs: the compiled modules (build/); the bundle through runBundle without and with its V8 code cache
 * (ADR 0018); the same two with one character past Latin-1 in the bundle, as it is without the ASCII plugin
 * (scripts/ascii-regexps.mjs: such a bundle is decoded from UTF-8 into a two-byte string); and the bundle required by
 * Node's own loader with Node's compile cache (`NODE_COMPILE_CACHE`, Node 22.1 and later; Node 20 ignores it).
 */
const VARIANTS = ['modules', 'cold', 'cached', 'utf8 cold', 'utf8 cached', 'node cache'] as const;
type Variant = (typeof VARIANTS)[number];
const BUNDLES = join(ROOT, 'dist', 'bundle');
/** The entry points beside dist/<name>.js that the bench writes for its other variants, and removes. */
const UTF8 = (name: string) => `${name}-bench-utf8`;
const REQUIRED = (name: string) => `${name}-bench-require`;

const entryOf = (variant: Variant, name: string) =>
  variant === 'modules' ? `build/${name}.js` : variant.startsWith('utf8') ? `dist/${UTF8(name)}.js` : variant === 'node cache' ? `dist/${REQUIRED(name)}.js` : `dist/${name}.js`;

/** The code caches of runBundle beside the bundles (dist/bundle/*.cache), which a start writes a few seconds in. */
const caches = () => readdirSync(BUNDLES).filter((name) => name.endsWith('.cache'));
const dropCaches = () => caches().forEach((name) => rmSync(join(BUNDLES, name)));

/** The UTF-8 copy of a bundle and the two extra entry points; returns what to remove afterwards. */
function writeVariants(name: string): string[] {
  const copy = join(BUNDLES, `${UTF8(name)}.cjs`);
  // A comment at the end: the same code, read as UTF-8 into a two-byte string.
  writeFileSync(copy, `${readFileSync(join(BUNDLES, `${name}.cjs`), 'utf8')}\n// \u2192\n`);
  const runBundle = "import { fileURLToPath } from 'node:url';\nimport { runBundle } from './run-bundle.js';\n";
  writeFileSync(join(ROOT, 'dist', `${UTF8(name)}.js`), `${runBundle}runBundle(fileURLToPath(new URL('./bundle/${UTF8(name)}.cjs', import.meta.url)), 'bench-utf8');\n`);
  // Node writes its compile cache at the exit, which a start measured here never reaches (it is killed once ready):
  // flushed 3 s in instead, as runBundle writes its own.
  writeFileSync(
    join(ROOT, 'dist', `${REQUIRED(name)}.js`),
    `import module from 'node:module';\nmodule.createRequire(import.meta.url)('./bundle/${name}.cjs');\nsetTimeout(() => module.flushCompileCache?.(), 3000).unref();\n`,
  );
  return [copy, join(ROOT, 'dist', `${UTF8(name)}.js`), join(ROOT, 'dist', `${REQUIRED(name)}.js`)];
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'oam-bench-start-'));
  // No Ollama answers there: the service starts anyway and says so, as on a machine where Ollama is not up yet.
  const { file } = await writeConfig('http://127.0.0.1:9', { database: { type: 'sqlite', path: join(dir, 'agent.sqlite') } }, dir);
  const kinds = {
    http: { name: 'main', start: (entry: string, env: Record<string, string>) => measureStart(entry, env, /listening: MCP endpoint/) },
    stdio: { name: 'stdio', start: (entry: string, env: Record<string, string>) => measureStart(entry, env, /"serverInfo"/, INITIALIZE) },
  };
  const rows: string[] = [];
  for (const [kind, { name, start }] of Object.entries(kinds)) {
    const written = writeVariants(name);
    const env = { AGENT_CONFIG: file };
    const nodeCache = join(dir, `node-compile-cache-${name}`);
    const nodeCacheWritten = () => existsSync(nodeCache) && readdirSync(nodeCache, { recursive: true, withFileTypes: true }).some((entry) => entry.isFile());
    const run = (variant: Variant) => start(entryOf(variant, name), variant === 'node cache' ? { ...env, NODE_COMPILE_CACHE: nodeCache } : env);
    await run('modules'); // a first start warms the page cache for all
    // Node's compile cache, written once by a start left running (Node 22.1 and later; Node 20 has none to write).
    if (Number(process.versions.node.split('.')[0]) >= 22) await startUntil(entryOf('node cache', name), nodeCacheWritten, { ...env, NODE_COMPILE_CACHE: nodeCache });
    const figures = Object.fromEntries(VARIANTS.map((variant) => [variant, [] as Start[]])) as Record<Variant, Start[]>;
    for (let round = 0; round < ROUNDS; round++) {
      figures.modules.push(await run('modules'));
      dropCaches();
      figures.cold.push(await run('cold'));
      figures['utf8 cold'].push(await run('utf8 cold'));
      await writeCacheOnce(entryOf('cached', name), `${name}.cjs.`, env);
      await writeCacheOnce(entryOf('utf8 cached', name), `${UTF8(name)}.cjs.`, env);
      figures.cached.push(await run('cached'));
      figures['utf8 cached'].push(await run('utf8 cached'));
      figures['node cache'].push(await run('node cache'));
    }
    written.forEach((path) => rmSync(path));
    dropCaches();
    const cpu = (variant: Variant) => median(figures[variant].map((f) => f.cpuMs));
    const wall = (variant: Variant) => median(figures[variant].map((f) => f.wallMs));
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    for (const [measure, of] of [
      ['CPU', cpu],
      ['wall', wall],
    ] as const) {
      rows.push(
        `| ${kind} | ${measure} | ${VARIANTS.map((variant) => of(variant).toFixed(0)).join(' | ')} | ${ratio(of('cached'), of('cold'))} | ${ratio(of('utf8 cold'), of('cold'))} | ` +
          `${ratio(of('utf8 cached'), of('cached'))} | ${ratio(of('node cache'), of('cached'))} |`,
      );
    }
  }
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`service start on Node ${process.version}, median of ${ROUNDS} alternating rounds (ms)\n`);
  process.stdout.write(
    `| start | | ${VARIANTS.join(' | ')} | cache / no cache | no ASCII / ASCII, no cache | no ASCII / ASCII, cached | Node's cache / ours |\n` +
      `|---|---|${VARIANTS.map(() => '---|').join('')}---|---|---|---|\n`,
  );
  process.stdout.write(`${rows.join('\n')}\n`);
}

/** A start left running until its bundle's code cache (`prefix`*) is written (src/entry/run-bundle.ts), unless it is there already. */
async function writeCacheOnce(entry: string, prefix: string, env: Record<string, string>): Promise<void> {
  const written = () => caches().some((file) => file.startsWith(prefix));
  if (!written()) await startUntil(entry, written, env);
}

/** A start left running until `done()`, then stopped; an error if that takes over 30 s. */
async function startUntil(entry: string, done: () => boolean, env: Record<string, string>): Promise<void> {
  const child = startEntry(entry, env);
  child.stdout.resume(); // its log is not read: drained, so that a full pipe never holds it up
  child.stderr.resume();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (let waited = 0; !done() && waited < 30_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  child.kill('SIGTERM');
  await exited;
  if (!done()) throw new Error(`${entry} wrote no code cache within 30 s`);
}

await main();
