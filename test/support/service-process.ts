import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'yaml';
import type { DatabaseTarget } from './database-probe.js';
import { E2E_DATABASE, migratedDatabase } from './databases.js';

/** The repository root (the folder with package.json), from test/support or its compiled copy in dist-tools. */
const ROOT = (() => {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, 'package.json')) || dir.endsWith('dist-tools')) dir = dirname(dir);
  return dir;
})();

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * A fresh temporary directory with an agent.yaml built from the defaults plus `overrides`, on a fresh, migrated
 * database of the kind the suite runs against (OAM_TEST_DB), unless `overrides` names one.
 */
export async function writeConfig(ollamaUrl: string, overrides: Record<string, unknown> = {}, dir = mkdtempSync(join(tmpdir(), 'oam-'))) {
  // A database named in full (replicas share one) needs no other: a PostgreSQL one made for nothing cost a CREATE DATABASE.
  const named = (overrides.database as { type?: string } | undefined)?.type !== undefined;
  const database = (named ? overrides.database : await migratedDatabase(E2E_DATABASE, dir)) as Record<string, unknown>;
  const base: Record<string, Record<string, unknown>> = {
    server: { host: '127.0.0.1', port: 0 },
    ollama: { host: ollamaUrl, model: 'test-model', request_timeout_ms: 10_000 },
    database,
    queue: { poll_interval_ms: 100 },
    workspace: { root: join(dir, 'workspace') },
    mcp: { tasks: { poll_interval_ms: 100 } },
  };
  for (const [section, values] of Object.entries(overrides)) base[section] = Array.isArray(values) ? (values as never) : { ...base[section], ...(values as object) };
  // A configured workspace root must exist (a missing one is refused as a likely typo).
  mkdirSync(base.workspace.root as string, { recursive: true });
  const file = join(dir, 'agent.yaml');
  writeFileSync(file, stringify(base));
  return { dir, file, database: database as DatabaseTarget, workspace: base.workspace.root as string };
}

/** Where the service is started from, and as whom: by default from the repository root as this user. */
export interface LaunchOptions {
  cwd?: string;
  /** Run as an unprivileged user (`nobody`) when the tests run as root, as an operator's service would. */
  unprivileged?: boolean;
}

/** `nobody`, where the tests run as root and may switch to it; otherwise the current (already unprivileged) user. */
export const UNPRIVILEGED: { uid: number; gid: number } | null = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : null;

/**
 * The folder the service runs from: the checkout, or for the unprivileged user the readable copy of the build
 * that the global setup made when the checkout is in a folder others cannot enter (test/support/readable-build.js).
 */
export const buildRoot = (unprivileged = false) => (unprivileged && UNPRIVILEGED && process.env.OAM_TEST_READABLE_ROOT) || ROOT;

export const launchOptions = ({ cwd, unprivileged = false }: LaunchOptions) => ({ cwd: cwd ?? buildRoot(unprivileged), ...(unprivileged ? UNPRIVILEGED : null) });

/** The built HTTP service (`node dist/main.js`) as a child process, for tests that need the real thing. */
export class ServiceProcess {
  private child: ChildProcess | null = null;
  stderr = '';
  port = 0;

  constructor(
    readonly configFile: string,
    private readonly extraEnv: Record<string, string> = {},
    private readonly options: LaunchOptions = {},
  ) {}

  /** The database named by the config file, for probes. */
  get database(): DatabaseTarget {
    return (parse(readFileSync(this.configFile, 'utf8')) as { database: DatabaseTarget }).database;
  }

  /** The repository root the service runs from. */
  get root(): string {
    return ROOT;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async start(port?: number): Promise<this> {
    if (port !== undefined) return this.startOn(port);
    // A port of its own choosing: when another process of the parallel suite took it before the bind, another one.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOn(await freePort());
      } catch (error) {
        if (!this.lostItsPort || attempt === 3) throw error;
      }
    }
  }

  private async startOn(port: number): Promise<this> {
    this.port = port;
    this.stderr = '';
    this.child = spawn(process.execPath, [join(buildRoot(this.options.unprivileged), 'dist/main.js')], {
      ...launchOptions(this.options),
      env: { PATH: process.env.PATH, NO_COLOR: '1', ...this.extraEnv, AGENT_CONFIG: this.configFile, AGENT__SERVER__PORT: String(this.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const child = this.child;
    child.stdout!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    // Ready when main.ts logs `listening:`, which it does once app.listen has bound the port: an event, where a
    // poll of the port every 100 ms cost each of the suite's ~250 starts 50 ms on average. Generous: on a loaded
    // machine (parallel workers, other jobs) Nest's start-up alone can take many seconds. A service that exits
    // first fails the start at once, with its output.
    await this.waitForOutput(/listening: MCP endpoint/, 60_000).catch((error: Error) => {
      throw new Error(`${error.message.startsWith('the service exited') ? 'service exited early' : 'service did not start'}:\n${this.stderr}`);
    });
    return this;
  }

  /** Whether the last start failed because another process took its port between freePort and the bind. */
  get lostItsPort(): boolean {
    return / is already in use /.test(this.stderr);
  }

  /** Resolves once the service's output (stdout and stderr) matches `pattern`: an event to wait for, not a time. */
  waitForOutput(pattern: RegExp, timeoutMs = 10_000): Promise<void> {
    const child = this.child;
    if (pattern.test(this.stderr)) return Promise.resolve();
    if (!child) return Promise.reject(new Error('the service is not running'));
    return new Promise((resolve, reject) => {
      const done = (error?: Error) => {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        child.stderr!.off('data', check);
        child.off('close', closed);
        if (error) reject(error);
        else resolve();
      };
      // After this class's own listeners (added first), so this.stderr already holds the chunk.
      const check = () => pattern.test(this.stderr) && done();
      // 'close' comes after the last output, when the line can no longer come: fail then, not at the deadline.
      const closed = () => done(new Error(`the service exited with no output matching ${pattern}:\n${this.stderr}`));
      const timer = setTimeout(() => done(new Error(`no output matching ${pattern} within ${timeoutMs} ms:\n${this.stderr}`)), timeoutMs);
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      child.once('close', closed);
    });
  }

  /** SIGKILL, as a crash would: no shutdown hook runs. */
  async kill9(): Promise<void> {
    await this.signal('SIGKILL');
  }

  async stop(): Promise<void> {
    await this.signal('SIGTERM');
  }

  /** Sends `signal`; resolves with the exit code (null when killed by a signal) once the process is gone. */
  signal(signal: NodeJS.Signals): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child?.exitCode ?? null);
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    child.kill(signal);
    return exited.finally(() => {
      if (this.child === child) this.child = null;
    });
  }
}
