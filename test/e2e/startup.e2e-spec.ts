import { afterEach, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { stringify } from 'yaml';
import { E2eStack, useStack, type StackOptions } from '../support/e2e-stack.js';
import { CLIENT_INFO, fieldsOf, MODERN, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { buildRoot, freePort, launchOptions, ServiceProcess, UNPRIVILEGED } from '../support/service-process.js';

const ROOT = join(import.meta.dirname, '../..');

/** A directory the unprivileged user owns (mkdtemp makes it 0700 for root). */
function ownedDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (UNPRIVILEGED) chownSync(dir, UNPRIVILEGED.uid, UNPRIVILEGED.gid);
  return dir;
}

/**
 * A stack (the suite's database kind) whose folder, workspace included, the unprivileged user owns, and whose
 * service runs as that user from `cwd`.
 */
function ownedStack(cwd: string, options: StackOptions = {}): E2eStack {
  const dir = ownedDir('oam-');
  // writeConfig keeps a workspace that exists: made here, so that it is the unprivileged user's.
  mkdirSync(join(dir, 'workspace'));
  if (UNPRIVILEGED) chownSync(join(dir, 'workspace'), UNPRIVILEGED.uid, UNPRIVILEGED.gid);
  return new E2eStack({ ...options, dir, launch: { cwd, unprivileged: true } });
}

/** agent.yaml in a fresh directory of the unprivileged user; returns the file. */
function configIn(dir: string, document: Record<string, unknown>): string {
  const file = join(dir, 'agent.yaml');
  writeFileSync(file, stringify(document), { mode: 0o644 });
  return file;
}

/** Runs the built service as the unprivileged user from `cwd` and waits for it to exit (a start-up failure). */
function failedStart(file: string, cwd: string, env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [join(buildRoot(true), 'dist/main.js')], {
    ...launchOptions({ cwd, unprivileged: true }),
    env: { PATH: process.env.PATH, AGENT_CONFIG: file, ...env },
    timeout: 15_000,
    encoding: 'utf8',
  });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

/** A failure is reported as `ollama-agent-mcp: …` lines only: no stack frame, no framework banner. */
function expectOneLineFailure(result: { status: number | null; stderr: string }, message: RegExp) {
  expect(result.status).toBe(1);
  const lines = result.stderr
    .trim()
    .split('\n')
    .filter((line) => !line.includes('[Startup]'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^ollama-agent-mcp: /);
  expect(lines[0]).toMatch(message);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stderr).not.toMatch(/successfully started|listening/);
}

describe('start-up as an unprivileged user from another directory', () => {
  // The scripted Ollama the tests' own agent.yaml files name; each test starts its service itself.
  const { ollama } = useStack({ service: false });
  const services: ServiceProcess[] = [];
  const stacks: E2eStack[] = [];
  const started = async (file: string, cwd: string, env: Record<string, string> = {}) => {
    const service = await new ServiceProcess(file, env, { cwd, unprivileged: true }).start();
    services.push(service);
    return service;
  };
  const startedStack = async (cwd: string, options: StackOptions = {}) => {
    const stack = ownedStack(cwd, options);
    stacks.push(stack);
    return stack.start();
  };

  afterEach(async () => {
    await Promise.all([...services.splice(0).map((service) => service.stop()), ...stacks.splice(0).map((stack) => stack.stop())]);
  });

  it("resolves the config file's relative paths against its directory, and logs them", async () => {
    const dir = ownedDir('oam-paths-');
    const file = configIn(dir, { ollama: { host: ollama.url, model: 'test-model' }, database: { type: 'sqlite', path: './state/agent.sqlite' }, server: { port: 0 } });
    const cwd = ownedDir('oam-elsewhere-');
    const service = await started(file, cwd);
    expect(service.stderr).toContain(`[Startup] config: ${file}`);
    expect(service.stderr).toContain(`[Startup] database: sqlite ${join(dir, 'state/agent.sqlite')}`);
    expect(service.stderr).toContain(`[Startup] workspace: ${join(dir, 'workspace')}`);
    expect(existsSync(join(dir, 'state/agent.sqlite'))).toBe(true);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('refuses a configured workspace root that does not exist, by its resolved path', async () => {
    const dir = ownedDir('oam-typo-');
    const file = configIn(dir, { ollama: { host: ollama.url }, workspace: { root: 'projcet' }, server: { port: 0 } });
    expectOneLineFailure(failedStart(file, '/'), new RegExp(`${file}: workspace.root: ${join(dir, 'projcet')} does not exist`));
  });

  it.each([
    [{ AGENT__OLAMA__MODEL: 'llama3.2' }, /AGENT__OLAMA__MODEL \(olama\): unknown key \(did you mean ollama\?\)/],
    [{ AGENT__OLLAMA__HOST: 'ftp://127.0.0.1:11434' }, /AGENT__OLLAMA__HOST \(ollama.host\): must be an http:\/\/ or https:\/\/ URL/],
  ])('names the variable behind a bad override: %j', async (env, message) => {
    const dir = ownedDir('oam-env-');
    const file = configIn(dir, { server: { port: 0 } });
    expectOneLineFailure(failedStart(file, dir, env), message);
  });

  it('names the data directory it cannot create, in one line', async () => {
    const dir = ownedDir('oam-eacces-');
    // A root-owned directory the unprivileged user cannot write into.
    const locked = mkdtempSync(join(tmpdir(), 'oam-locked-'));
    const file = configIn(dir, { ollama: { host: ollama.url }, database: { type: 'sqlite', path: join(locked, 'data/agent.sqlite') }, server: { port: 0 } });
    const result = failedStart(file, '/');
    if (!UNPRIVILEGED) return; // as an ordinary user already, the locked directory is this user's own
    expectOneLineFailure(result, new RegExp(`database.path: cannot use ${join(locked, 'data')} \\(permission denied\\)`));
  });

  it('says in one line that the port is in use and exits 1 before any "started" line', async () => {
    const blocker: Server = createServer();
    const port = await freePort();
    await new Promise<void>((done) => blocker.listen(port, '127.0.0.1', done));
    try {
      const dir = ownedDir('oam-port-');
      const file = configIn(dir, { ollama: { host: ollama.url }, server: { port } });
      expectOneLineFailure(failedStart(file, dir), new RegExp(`server.port: 127.0.0.1:${port} is already in use`));
    } finally {
      await new Promise((done) => blocker.close(done));
    }
  });

  it('warns at start when Ollama is not reachable, with the fix', async () => {
    const dir = ownedDir('oam-no-ollama-');
    const file = configIn(dir, { ollama: { host: 'http://127.0.0.1:9' }, server: { port: 0 } });
    const service = await started(file, dir);
    await service.waitForOutput(/WARN \[Ollama\] .*not reachable at http:\/\/127\.0\.0\.1:9.*`ollama serve`/);
  });

  it('warns at start when the model is not pulled, with the fix', async () => {
    const dir = ownedDir('oam-no-model-');
    const file = configIn(dir, { ollama: { host: ollama.url, model: 'qwen3:8b' }, server: { port: 0 } });
    const service = await started(file, dir);
    await service.waitForOutput(/^(?=[\s\S]*model qwen3:8b is not pulled)(?=[\s\S]*`ollama pull qwen3:8b`)/);
  });

  it('logs each Task as it starts and ends (duration, outcome), without colour codes on a pipe', async () => {
    const stack = await startedStack(ownedDir('oam-cwd-'), { env: { NO_COLOR: '' } });
    const { service } = stack;
    const client = await stack.mcpClient();
    stack.ollama.enqueue({ content: 'logged answer', promptEvalCount: 3, evalCount: 4 });
    const taskId = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'log me' } }))).task_id;
    await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), taskId);
    await service.waitForOutput(new RegExp(`task ${taskId} completed`));
    expect(service.stderr).toMatch(new RegExp(`task ${taskId} started: owner \\S+, session [0-9a-f-]{36}, queued \\d+\\.\\d s`));
    expect(service.stderr).toMatch(new RegExp(`task ${taskId} completed after \\d+\\.\\d s \\(tokens 3 in, 4 out\\)`));
    expect(service.stderr).not.toContain('\x1b[');
  });

  it('writes one JSON object per line with log.format json', async () => {
    const { service } = await startedStack(ownedDir('oam-json-'), { config: { log: { format: 'json' } } });
    await service.waitForOutput(/\[Ollama\]|"context":"Ollama"/);
    await service.stop();
    const lines = service.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ level: expect.any(String), message: expect.any(String) });
    expect(lines.map((line) => JSON.parse(line).message)).toEqual(expect.arrayContaining([expect.stringMatching(/^listening: MCP endpoint /)]));
  });
});

describe('one local user in auth.mode none', () => {
  const stack = useStack();
  const { ollama } = stack;

  it('finds over HTTP a Task created over stdio on the same database', async () => {
    const { file } = stack.config;
    const stdio = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
    await stdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(ROOT, 'dist/stdio.js')],
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', AGENT_CONFIG: file },
        stderr: 'pipe',
      }),
    );
    ollama.enqueue({ content: 'made over stdio' });
    const taskId = fieldsOf(textOf(await stdio.callTool({ name: 'agent_run', arguments: { request: 'over stdio' } }))).task_id;
    const http = await stack.mcpClient();
    const final = await waitForTerminal(async (id) => textOf(await http.callTool({ name: 'agent_status', arguments: { task_id: id } })), taskId);
    expect(final).toMatchObject({ status: 'completed', result: 'made over stdio' });
    await stdio.close();
  }, 60_000);
});
