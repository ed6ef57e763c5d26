import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';
import { ScriptedOllama, type RecordedChat } from '../support/scripted-ollama.js';
import { freePort, ServiceProcess, writeConfig } from '../support/service-process.js';

/**
 * The agent with other MCP servers as its tools: the reference servers from the npm registry, as they
 * are (server-everything 2026.8.31 over stdio and Streamable HTTP, server-memory and server-filesystem
 * over stdio), behind a scripted model that calls their tools.
 */

const MODULES = join(import.meta.dirname, '../../node_modules/@modelcontextprotocol');
const EVERYTHING = join(MODULES, 'server-everything/dist/index.js');
const MEMORY = join(MODULES, 'server-memory/dist/index.js');
const FILESYSTEM = join(MODULES, 'server-filesystem/dist/index.js');
const ADMIN_TOKEN = 'mcp-servers-admin-token-0123456789';
/** In the service's own environment: no MCP server may see it. */
const SERVICE_SECRET = 'service-secret-value-that-must-not-leak';

const calls = (...list: [string, Record<string, unknown>][]) => ({ toolCalls: list.map(([name, args]) => ({ name, arguments: args })), promptEvalCount: 10, evalCount: 5 });
const stdio = (script: string, args: string[] = []) => ({ command: process.execPath, args: [script, ...args] });

/** One service with MCP servers configured, a client, and probes of its database. */
class Harness {
  readonly ollama = new ScriptedOllama();
  service!: ServiceProcess;
  client!: Client;
  config!: Awaited<ReturnType<typeof writeConfig>>;

  constructor(
    private readonly overrides: (dir: string) => Record<string, unknown>,
    private readonly headers: Record<string, string> = {},
  ) {}

  get db(): DatabaseTarget {
    return this.config.database;
  }

  async start(): Promise<void> {
    await this.ollama.start();
    const dir = mkdtempSync(join(tmpdir(), 'oam-mcp-'));
    this.config = await writeConfig(this.ollama.url, { auth: { admin_token: ADMIN_TOKEN }, ...this.overrides(dir) }, dir);
    this.service = await new ServiceProcess(this.config.file, { SERVICE_SECRET, AGENT__OLLAMA__KEEP_ALIVE: '29m' }).start();
    this.client = await modernClient(this.service.url, this.headers);
  }

  async stop(): Promise<void> {
    await this.client?.close();
    await this.service?.stop();
    await this.ollama.stop();
  }

  async submit(request: string, sessionId?: string): Promise<Record<string, string>> {
    return fieldsOf(textOf(await this.client.callTool({ name: 'agent_run', arguments: { request, ...(sessionId ? { session_id: sessionId } : {}) } })));
  }

  async statusText(taskId: string): Promise<string> {
    return textOf(await this.client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
  }

  async finished(taskId: string, timeoutMs = 20_000): Promise<string> {
    await waitForTerminal((id) => this.statusText(id), taskId, timeoutMs);
    return this.statusText(taskId);
  }

  /** Runs one Task to its end; returns its id, session and the last chat the model saw. */
  async run(request: string, sessionId?: string): Promise<{ taskId: string; sessionId: string; text: string }> {
    const accepted = await this.submit(request, sessionId);
    const text = await this.finished(accepted.task_id);
    return { taskId: accepted.task_id, sessionId: accepted.session_id, text };
  }

  /** The tool results the model was given, by tool name, in the last chat request. */
  toolResults(chat: RecordedChat = this.ollama.workChats.at(-1)!): { name: string; content: string }[] {
    return chat.body.messages.filter((message) => message.role === 'tool').map((message) => ({ name: message.tool_name!, content: message.content }));
  }

  async admin(path: string): Promise<any> {
    const response = await fetch(`${this.service.url.replace(/\/mcp$/, '')}${path}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    return response.json();
  }

  audit(taskId: string): Promise<{ outcome: string; detail: string }[]> {
    return probe(this.db, "SELECT outcome, detail FROM audit_events WHERE action = 'mcp_tool.call' AND task_id = ? ORDER BY seq", taskId);
  }

  steps(taskId: string): Promise<{ kind: string; name: string; outcome: string; detail: string }[]> {
    return probe(this.db, "SELECT kind, name, outcome, detail FROM task_steps WHERE task_id = ? AND kind = 'mcp_tool' ORDER BY seq", taskId);
  }

  /** The process ids of the stdio servers this service started whose command line holds `marker`. */
  serverPids(marker: string): number[] {
    const out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(this.service.pid)], { encoding: 'utf8' });
    return out
      .split('\n')
      .filter((line) => line.includes(marker))
      .map((line) => Number(line.trim().split(/\s+/)[0]));
  }
}

const toolNames = (chat: RecordedChat) => (chat.body.tools ?? []).map((tool) => tool.function.name);

describe('stdio: server-everything, memory and filesystem as the agent tools', () => {
  const memoryFile = join(mkdtempSync(join(tmpdir(), 'oam-memory-')), 'memory.jsonl');
  const h = new Harness(() => ({
    agent: {
      mcp_servers: {
        // Allow lists keep the three servers under the catalog threshold (20 tools), so every schema is offered.
        everything: { ...stdio(EVERYTHING, ['stdio']), env: { GREETING: 'hello' }, tools: { allow: ['echo', 'get-*'], deny: ['get-resource-*', 'get-annotated-message'] } },
        memory: { ...stdio(MEMORY), env: { MEMORY_FILE_PATH: memoryFile }, tools: { allow: ['create_entities', 'read_graph'] } },
        files: { ...stdio(FILESYSTEM, [tmpdir()]), tools: { allow: ['write_file', 'list_allowed_directories'] } },
      },
    },
  }));
  beforeAll(() => {
    // A vision model: an image a tool returns reaches it as an image.
    h.ollama.capabilities = ['completion', 'tools', 'vision'];
    return h.start();
  }, 30_000);
  afterAll(() => h.stop());

  it('lists each server connected with its tools for admins', async () => {
    const { servers } = await h.admin('/admin/mcp-servers');
    const byName = Object.fromEntries(servers.map((server: any) => [server.name, server]));
    expect(byName.everything).toMatchObject({ transport: 'stdio', state: 'connected', last_error: null });
    expect(byName.everything.tools).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'trigger-long-running-operation', 'get-roots-list', 'get-env']));
    expect(byName.memory.tools).toEqual(expect.arrayContaining(['create_entities', 'read_graph']));
    expect(byName.files.tools).toEqual(expect.arrayContaining(['write_file', 'list_allowed_directories']));
    // No secret of the configuration is shown.
    expect(JSON.stringify(servers)).not.toContain('MEMORY_FILE_PATH');
  });

  it('runs a tool of each kind end to end: text, numbers, an image, structured content, the environment and the roots', async () => {
    h.ollama.enqueue(
      calls(
        ['everything__echo', { message: 'ping' }],
        ['everything__get-sum', { a: 2, b: 40 }],
        ['everything__get-tiny-image', {}],
        ['everything__get-structured-content', { location: 'Chicago' }],
        ['everything__get-env', {}],
        ['everything__get-roots-list', {}],
      ),
      { content: 'done', promptEvalCount: 10, evalCount: 5 },
    );
    const { taskId, sessionId, text } = await h.run('use the everything tools');
    expect(fieldsOf(text).status).toBe('completed');
    const first = h.ollama.workChats.at(-2)!;
    expect(toolNames(first)).toEqual([
      ...['list_dir', 'read_file', 'write_file', 'edit_file', 'glob', 'grep', 'run_command', 'plan', 'ask_user'],
      ...['everything__echo', 'everything__get-env', 'everything__get-structured-content', 'everything__get-sum', 'everything__get-tiny-image', 'everything__get-roots-list'],
      ...['memory__create_entities', 'memory__read_graph', 'files__write_file', 'files__list_allowed_directories'],
    ]);
    const echo = first.body.tools!.find((tool) => tool.function.name === 'everything__echo') as any;
    expect(echo.function.parameters).toEqual({ type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] });
    const results = Object.fromEntries(h.toolResults().map((result) => [result.name, result.content]));
    expect(results['everything__echo']).toBe('Echo: ping');
    expect(results['everything__get-sum']).toContain('The sum of 2 and 40 is 42.');
    expect(results['everything__get-tiny-image']).toMatch(/\[image image\/png, \d+ bytes\]/);
    const toolMessages = h.ollama.workChats.at(-1)!.body.messages.filter((message) => message.role === 'tool');
    const image = toolMessages.find((message) => message.tool_name === 'everything__get-tiny-image')!.images!;
    expect(image).toHaveLength(1);
    expect(Buffer.from(image[0], 'base64').subarray(1, 4).toString()).toBe('PNG');
    expect(toolMessages.filter((message) => message.images)).toHaveLength(1);
    expect(JSON.parse(results['everything__get-structured-content'].split('\n')[0])).toHaveProperty('temperature');
    const env = JSON.parse(results['everything__get-env']) as Record<string, string>;
    // Only what the configuration lists, and PATH: nothing of the service's own environment.
    expect(Object.keys(env).sort()).toEqual(['GREETING', 'PATH']);
    expect(results['everything__get-env']).not.toContain(SERVICE_SECRET);
    // The roots are the session's own workspace.
    const workspace = join(h.config.workspace, 'sessions', sessionId);
    expect(results['everything__get-roots-list']).toContain(pathToFileURL(workspace).href);

    const audit = await h.audit(taskId);
    expect(audit).toHaveLength(6);
    expect(JSON.parse(audit[0].detail)).toMatchObject({ server: 'everything', tool: 'echo', arguments: { message: 'ping' }, result: 'ok' });
    const steps = await h.steps(taskId);
    expect(steps.map((step) => step.name)).toEqual(['everything__echo', 'everything__get-sum', 'everything__get-tiny-image', 'everything__get-structured-content', 'everything__get-env', 'everything__get-roots-list']);
    expect(steps.every((step) => step.outcome === 'ok')).toBe(true);
  });

  it('uses server-memory, and server-filesystem in the session workspace (its roots)', async () => {
    h.ollama.enqueue(
      calls(['memory__create_entities', { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] }]),
      calls(['memory__read_graph', {}], ['files__list_allowed_directories', {}]),
      { content: 'next', promptEvalCount: 10, evalCount: 5 },
    );
    const first = await h.run('remember Ada');
    expect(fieldsOf(first.text).status).toBe('completed');
    const graph = h.toolResults().find((result) => result.name === 'memory__read_graph')!.content;
    expect(graph).toContain('wrote the first program');
    expect(readFileSync(memoryFile, 'utf8')).toContain('Ada');
    const workspace = join(h.config.workspace, 'sessions', first.sessionId);
    expect(h.toolResults().find((result) => result.name === 'files__list_allowed_directories')!.content).toContain(workspace);

    h.ollama.enqueue(calls(['files__write_file', { path: join(workspace, 'note.txt'), content: 'from the filesystem server' }]), { content: 'written', promptEvalCount: 10, evalCount: 5 });
    const second = await h.run('write a note', first.sessionId);
    expect(fieldsOf(second.text).status).toBe('completed');
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('from the filesystem server');
    // Outside the session workspace (the server's own argument directory included) it refuses.
    h.ollama.enqueue(calls(['files__write_file', { path: join(tmpdir(), 'outside.txt'), content: 'x' }]), { content: 'refused', promptEvalCount: 10, evalCount: 5 });
    await h.run('write outside', first.sessionId);
    expect(h.toolResults()[0].content).toMatch(/^Error: .*(denied|outside)/i);
    expect(existsSync(join(tmpdir(), 'outside.txt'))).toBe(false);
  });

  it('stops its servers when it shuts down', async () => {
    const pids = h.serverPids('@modelcontextprotocol/server-');
    expect(pids).toHaveLength(3);
    await h.client.close();
    expect(await h.service.signal('SIGTERM')).toBe(0);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    expect(pids.filter(alive)).toEqual([]);
  });
});

/** A Streamable HTTP server-everything on a free port, behind a recording forwarder (to see the headers it gets). */
class HttpEverything {
  readonly seenHeaders: Record<string, string | string[] | undefined>[] = [];
  /** The request bodies it forwarded (JSON-RPC messages). */
  readonly seenBodies: string[] = [];
  private child: ChildProcess | null = null;
  private forwarder: Server | null = null;
  url = '';

  async start(): Promise<void> {
    const port = await freePort();
    this.child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PATH: process.env.PATH, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      this.child!.stderr!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolve());
      this.child!.once('exit', () => reject(new Error('server-everything (HTTP) exited')));
    });
    this.forwarder = createServer((req, res) => {
      this.seenHeaders.push(req.headers);
      req.on('data', (chunk: Buffer) => this.seenBodies.push(chunk.toString()));
      const upstream = request({ host: '127.0.0.1', port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.forwarder!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.forwarder.address() as AddressInfo).port}/mcp`;
  }

  async stop(): Promise<void> {
    this.forwarder?.closeAllConnections();
    this.forwarder?.close();
    this.child?.kill();
  }
}

describe('Streamable HTTP: server-everything with caller headers, sampling on the Task model, elicitation declined', () => {
  const remote = new HttpEverything();
  const h = new Harness(
    () => ({
      agent: {
        mcp_servers: {
          remote: {
            url: remote.url,
            headers: { 'X-Api-Key': 'configured-api-key-0123456789', 'X-Caller': 'user={user}' },
            sampling: true,
            tools: { allow: ['echo', 'trigger-sampling-request', 'trigger-elicitation-request', 'trigger-long-running-operation'] },
          },
        },
      },
    }),
    // The caller's own credentials, which must never reach the other server.
    { Authorization: 'Bearer caller-own-token-0123456789' },
  );
  beforeAll(async () => {
    await remote.start();
    await h.start();
  }, 30_000);
  afterAll(async () => {
    await h.stop();
    await remote.stop();
  });

  it('calls a tool with the configured headers and the caller named, never the caller credentials', async () => {
    h.ollama.enqueue(calls(['remote__echo', { message: 'over http' }]), { content: 'ok', promptEvalCount: 10, evalCount: 5 });
    const { taskId, text } = await h.run('echo over http');
    expect(fieldsOf(text).status).toBe('completed');
    expect(h.toolResults()[0]).toEqual({ name: 'remote__echo', content: 'Echo: over http' });
    const owner = (await probe<{ owner: string }>(h.db, 'SELECT owner FROM tasks WHERE id = ?', taskId))[0].owner;
    expect(remote.seenHeaders.length).toBeGreaterThan(0);
    for (const headers of remote.seenHeaders) {
      expect(headers['x-api-key']).toBe('configured-api-key-0123456789');
      expect(headers['x-caller']).toBe(`user=${owner}`);
      expect(headers.authorization).toBeUndefined();
    }
    // One connection per caller (the headers name them): admins see the latest connected one.
    const { servers } = await h.admin('/admin/mcp-servers');
    expect(servers[0]).toMatchObject({ name: 'remote', transport: 'http', state: 'per_caller', tools: expect.arrayContaining(['echo']) });
    // Header values are secrets: not in the audit, the trace or the log.
    const audit = JSON.stringify(await probe(h.db, 'SELECT detail FROM audit_events'));
    expect(audit).not.toContain('configured-api-key-0123456789');
    expect(h.service.stderr).not.toContain('configured-api-key-0123456789');
  });

  it('answers a sampling request with the Task model and counts its tokens in the Task', async () => {
    h.ollama.enqueue(
      calls(['remote__trigger-sampling-request', { prompt: 'say hi', maxTokens: 50 }]),
      { content: 'hi from the task model', promptEvalCount: 100, evalCount: 50 },
      { content: 'sampled', promptEvalCount: 10, evalCount: 5 },
    );
    const { taskId, text } = await h.run('sample');
    expect(fieldsOf(text).status).toBe('completed');
    expect(h.toolResults()[0].content).toContain('hi from the task model');
    const sampling = h.ollama.workChats.at(-2)!;
    expect(sampling.body.messages.at(-1)!.content).toContain('say hi');
    expect(sampling.body.options).toMatchObject({ num_predict: 50 });
    expect(sampling.body.tools ?? []).toEqual([]);
    const [row] = await probe<{ input_tokens: number; output_tokens: number }>(h.db, 'SELECT input_tokens, output_tokens FROM tasks WHERE id = ?', taskId);
    expect(row).toEqual({ input_tokens: 120, output_tokens: 60 });
  });

  it('cancelling the Task sends notifications/cancelled for the call in flight', async () => {
    h.ollama.enqueue(calls(['remote__trigger-long-running-operation', { duration: 60, steps: 60 }]));
    const accepted = await h.submit('hang over http');
    const deadline = Date.now() + 10_000;
    while (!remote.seenBodies.some((body) => body.includes('trigger-long-running-operation'))) {
      if (Date.now() > deadline) throw new Error('the call never reached the server');
      await new Promise((done) => setTimeout(done, 50));
    }
    const response = await fetch(`${h.service.url.replace(/\/mcp$/, '')}/admin/tasks/${accepted.task_id}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(response.status).toBe(200);
    expect(fieldsOf(await h.finished(accepted.task_id)).status).toBe('cancelled');
    const call = JSON.parse(remote.seenBodies.find((body) => body.includes('trigger-long-running-operation'))!) as { id: number };
    await new Promise((done) => setTimeout(done, 200));
    const cancelled = remote.seenBodies.map((body) => JSON.parse(body)).find((message) => message.method === 'notifications/cancelled');
    expect(cancelled).toMatchObject({ params: { requestId: call.id } });
  });

  it('declines an elicitation request: the person is not asked behind their back', async () => {
    h.ollama.enqueue(calls(['remote__trigger-elicitation-request', {}]), { content: 'declined', promptEvalCount: 10, evalCount: 5 });
    await h.run('elicit');
    expect(h.toolResults()[0].content).toContain('declined');
  });
});

describe('failures: a server killed mid-Task, a hung call cancelled, a call past timeout_ms, a server that never answers', () => {
  // Accepts connections and never answers: a hung HTTP server.
  const silent = createNetServer(() => undefined);
  const h = new Harness(() => ({
    agent: {
      mcp_servers: {
        hung: { url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`, timeout_ms: 1500 },
        everything: { ...stdio(EVERYTHING, ['stdio']), tools: { allow: ['echo', 'trigger-long-running-operation'] } },
        // The extra argument (ignored by the server) tells its process apart from the other one.
        slow: { ...stdio(EVERYTHING, ['stdio', 'slow-instance']), timeout_ms: 1000, tools: { allow: ['trigger-long-running-operation'] } },
      },
    },
  }));
  beforeAll(async () => {
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    await h.start();
  }, 30_000);
  afterAll(async () => {
    await h.stop();
    silent.close();
  });

  it('a server that never answers is shown down with why, and costs a Task at most its timeout', async () => {
    const { servers } = await h.admin('/admin/mcp-servers');
    // Down, or trying again (with backoff): never connected, and the reason kept.
    const hung = servers.find((server: any) => server.name === 'hung');
    expect(['down', 'connecting']).toContain(hung.state);
    expect(hung.last_error).toMatch(/^cannot connect: .*tim/i);
    h.ollama.enqueue(calls(['everything__echo', { message: 'despite hung' }]), { content: 'ok', promptEvalCount: 10, evalCount: 5 });
    const started = Date.now();
    const { text } = await h.run('echo with a hung server around');
    expect(fieldsOf(text).status).toBe('completed');
    expect(Date.now() - started).toBeLessThan(4500);
    expect(h.toolResults()[0].content).toBe('Echo: despite hung');
    expect(toolNames(h.ollama.workChats.at(-2)!).filter((name) => name.startsWith('hung__'))).toEqual([]);
  });

  /** Waits until the Task's current step is the MCP call (the call is in flight). */
  async function inFlight(taskId: string, tool: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!fieldsOf(await h.statusText(taskId)).current_task?.startsWith(tool)) {
      if (Date.now() > deadline) throw new Error(`${tool} never started`);
      await new Promise((done) => setTimeout(done, 50));
    }
    await new Promise((done) => setTimeout(done, 200));
  }

  it('a server killed during a call: the call fails clearly, the server is restarted, the next Task works', async () => {
    h.ollama.enqueue(calls(['everything__trigger-long-running-operation', { duration: 20, steps: 20 }]), { content: 'the server died', promptEvalCount: 10, evalCount: 5 });
    const accepted = await h.submit('long work');
    await inFlight(accepted.task_id, 'everything__trigger-long-running-operation');
    const pids = h.serverPids('server-everything').filter((candidate) => !h.serverPids('slow-instance').includes(candidate));
    expect(pids).toHaveLength(1);
    const [pid] = pids;
    process.kill(pid, 'SIGKILL');
    const text = await h.finished(accepted.task_id);
    expect(fieldsOf(text).status).toBe('completed');
    expect(h.toolResults()[0].content).toMatch(/^Error: the MCP server "everything" stopped during the call/);
    const [step] = await h.steps(accepted.task_id);
    expect(step.outcome).toBe('error');

    h.ollama.enqueue(calls(['everything__echo', { message: 'back' }]), { content: 'ok', promptEvalCount: 10, evalCount: 5 });
    const next = await h.run('echo again');
    expect(fieldsOf(next.text).status).toBe('completed');
    expect(h.toolResults()[0].content).toBe('Echo: back');
    expect(h.serverPids('server-everything')).not.toContain(pid);
    expect(h.service.stderr).toMatch(/\[mcp:everything\].*closed the connection/);
    // Its stderr reaches the log under its name.
    expect(h.service.stderr).toMatch(/\[mcp:everything\].*Starting default \(STDIO\) server/);
  });

  it('cancelling the Task cancels a hung call at once, and the server keeps serving', async () => {
    h.ollama.enqueue(calls(['everything__trigger-long-running-operation', { duration: 60, steps: 60 }]));
    const accepted = await h.submit('hang');
    await inFlight(accepted.task_id, 'everything__trigger-long-running-operation');
    const started = Date.now();
    const response = await fetch(`${h.service.url.replace(/\/mcp$/, '')}/admin/tasks/${accepted.task_id}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(response.status).toBe(200);
    expect(fieldsOf(await h.finished(accepted.task_id)).status).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(5000);
    const [step] = await h.steps(accepted.task_id);
    expect(step.outcome).toBe('cancelled');

    h.ollama.enqueue(calls(['everything__echo', { message: 'still here' }]), { content: 'ok', promptEvalCount: 10, evalCount: 5 });
    await h.run('echo after cancel');
    expect(h.toolResults()[0].content).toBe('Echo: still here');
  });

  it('a call that does not answer within timeout_ms is a tool error, not a stuck Task', async () => {
    h.ollama.enqueue(calls(['slow__trigger-long-running-operation', { duration: 30, steps: 30 }]), { content: 'too slow', promptEvalCount: 10, evalCount: 5 });
    const started = Date.now();
    const { taskId, text } = await h.run('slow work');
    expect(fieldsOf(text).status).toBe('completed');
    expect(Date.now() - started).toBeLessThan(6000);
    expect(h.toolResults()[0].content).toMatch(/^Error: slow__trigger-long-running-operation did not answer within 1000 ms; the call was cancelled/);
    const [audit] = await h.audit(taskId);
    expect(JSON.parse(audit.detail)).toMatchObject({ server: 'slow', tool: 'trigger-long-running-operation', result: 'timeout' });
  });
});

describe('allow_groups: a group that is not allowed does not see the tools', () => {
  const h = new Harness(
    () => ({
      auth: { ...PROXY_AUTH, admin_token: ADMIN_TOKEN },
      agent: { mcp_servers: { ops: { ...stdio(EVERYTHING, ['stdio']), allow_groups: ['ops'], tools: { allow: ['echo'] } } } },
    }),
    as('alice@example.com', 'dev'),
  );
  beforeAll(() => h.start(), 30_000);
  afterAll(() => h.stop());

  it('offers the server only to callers in allow_groups, and refuses a call of a tool not offered', async () => {
    h.ollama.enqueue(calls(['ops__echo', { message: 'sneak' }]), { content: 'no', promptEvalCount: 10, evalCount: 5 });
    const alice = await h.run('echo as dev');
    expect(fieldsOf(alice.text).status).toBe('completed');
    expect(toolNames(h.ollama.workChats.at(-2)!)).not.toContain('ops__echo');
    expect(h.toolResults()[0].content).toMatch(/^Error: unknown tool "ops__echo"/);
    expect(await h.audit(alice.taskId)).toEqual([]);

    const bob = await modernClient(h.service.url, as('bob@example.com', 'dev, ops'));
    h.ollama.enqueue(calls(['ops__echo', { message: 'ops here' }]), { content: 'yes', promptEvalCount: 10, evalCount: 5 });
    const accepted = fieldsOf(textOf(await bob.callTool({ name: 'agent_run', arguments: { request: 'echo as ops' } })));
    await waitForTerminal(async (id) => textOf(await bob.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
    await bob.close();
    expect(toolNames(h.ollama.workChats.at(-2)!)).toContain('ops__echo');
    expect(h.toolResults()[0].content).toBe('Echo: ops here');
    const [audit] = await probe<{ actor: string; groups: string }>(h.db, "SELECT actor, groups FROM audit_events WHERE action = 'mcp_tool.call' AND task_id = ?", accepted.task_id);
    expect(audit.actor).toBe('bob@example.com');
    expect(JSON.parse(audit.groups)).toEqual(['dev', 'ops']);
  });
});

describe('approvals in changes mode: a tool that is not read-only waits for the person', () => {
  const h = new Harness(() => ({
    agent: {
      approvals: { mode: 'changes' },
      mcp_servers: {
        everything: { ...stdio(EVERYTHING, ['stdio']), tools: { allow: ['echo', 'toggle-simulated-logging'] } },
        trusted: { ...stdio(EVERYTHING, ['stdio']), approval: 'never', tools: { allow: ['toggle-subscriber-updates'] } },
        guarded: { ...stdio(EVERYTHING, ['stdio']), approval: 'always', tools: { allow: ['get-sum'] } },
      },
    },
  }));
  beforeAll(() => h.start(), 30_000);
  afterAll(() => h.stop());

  it('runs read-only and approval: never tools at once', async () => {
    h.ollama.enqueue(calls(['everything__echo', { message: 'read' }], ['trusted__toggle-subscriber-updates', {}]), { content: 'ran', promptEvalCount: 10, evalCount: 5 });
    const { text } = await h.run('no approval needed');
    expect(fieldsOf(text).status).toBe('completed');
    expect(h.toolResults().map((result) => result.content)).toEqual(['Echo: read', expect.stringMatching(/simulated resource updated notifications/)]);
  });

  it('asks for a non-read-only tool with the server, the tool and the exact arguments; approved, it runs', async () => {
    h.ollama.enqueue(calls(['everything__toggle-simulated-logging', {}]));
    const paused = await h.run('turn logging on');
    expect(paused.text).toContain('承認が必要です');
    expect(paused.text).toContain('MCP tool: everything__toggle-simulated-logging {}');
    expect(await h.audit(paused.taskId)).toEqual([]);

    h.ollama.enqueue({ content: 'logging toggled', promptEvalCount: 10, evalCount: 5 });
    const approved = await h.run('承認', paused.sessionId);
    expect(fieldsOf(approved.text).status).toBe('completed');
    expect(h.toolResults().at(-1)!.content).toMatch(/logging/i);
    const [audit] = await h.audit(approved.taskId);
    expect(JSON.parse(audit.detail)).toMatchObject({ server: 'everything', tool: 'toggle-simulated-logging', result: 'ok' });
  });

  it('denied, it does not run; approval: always asks even for a read-only tool', async () => {
    h.ollama.enqueue(calls(['guarded__get-sum', { a: 1, b: 2 }]));
    const paused = await h.run('add');
    expect(paused.text).toContain('MCP tool: guarded__get-sum {"a":1,"b":2}');
    h.ollama.enqueue({ content: 'not added', promptEvalCount: 10, evalCount: 5 });
    const denied = await h.run('拒否', paused.sessionId);
    expect(fieldsOf(denied.text).status).toBe('completed');
    expect(h.toolResults().at(-1)!.content).toMatch(/^Not run: the person refused/);
    expect(await h.audit(denied.taskId)).toEqual([]);
  });
});

describe('many tools: 60+ behind find_tools, the prompt prefix byte-stable', () => {
  const h = new Harness(() => ({
    agent: {
      approvals: { mode: 'changes' },
      mcp_servers: {
        alpha: stdio(EVERYTHING, ['stdio']),
        beta: stdio(EVERYTHING, ['stdio']),
        gamma: stdio(EVERYTHING, ['stdio']),
        delta: stdio(EVERYTHING, ['stdio']),
        memory: { ...stdio(MEMORY), env: { MEMORY_FILE_PATH: join(mkdtempSync(join(tmpdir(), 'oam-memory-')), 'memory.jsonl') } },
      },
    },
  }));
  beforeAll(() => h.start(), 30_000);
  afterAll(() => h.stop());

  it('offers find_tools and call_tool instead of every schema, the same bytes for every Task', async () => {
    const { servers } = await h.admin('/admin/mcp-servers');
    expect(servers.reduce((sum: number, server: any) => sum + server.tools.length, 0)).toBeGreaterThanOrEqual(60);

    h.ollama.enqueue(
      calls(['find_tools', { query: 'echo message' }]),
      calls(['call_tool', { name: 'beta__echo', arguments: { message: 'found' } }]),
      { content: 'done', promptEvalCount: 10, evalCount: 5 },
    );
    const first = await h.run('find and echo');
    expect(fieldsOf(first.text).status).toBe('completed');
    const [found, echoed] = h.toolResults();
    expect(found.content).toContain('- alpha__echo: Echoes back the input string');
    expect(found.content).toContain('arguments schema: {"type":"object","properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]}');
    expect(echoed).toEqual({ name: 'call_tool', content: 'Echo: found' });
    const [audit] = await h.audit(first.taskId);
    expect(JSON.parse(audit.detail)).toMatchObject({ server: 'beta', tool: 'echo', result: 'ok' });

    const chats = h.ollama.workChats.length;
    h.ollama.enqueue({ content: 'second', promptEvalCount: 10, evalCount: 5 });
    await h.run('another task');
    const [a, b] = [h.ollama.workChats[chats - 3], h.ollama.workChats[chats]];
    expect(toolNames(a)).toEqual(['list_dir', 'read_file', 'write_file', 'edit_file', 'glob', 'grep', 'run_command', 'plan', 'ask_user', 'find_tools', 'call_tool']);
    // The tool block and the system prompt are the same bytes: Ollama reuses the cached prefix.
    expect(JSON.stringify(b.body.tools)).toBe(JSON.stringify(a.body.tools));
    expect(b.body.messages[0]).toEqual(a.body.messages[0]);
  });

  it('approves a call_tool call as the tool it reaches, with its arguments', async () => {
    h.ollama.enqueue(calls(['call_tool', { name: 'gamma__toggle-simulated-logging', arguments: {} }]));
    const paused = await h.run('toggle through the catalog');
    expect(paused.text).toContain('MCP tool: gamma__toggle-simulated-logging {}');
    h.ollama.enqueue({ content: 'toggled', promptEvalCount: 10, evalCount: 5 });
    await h.run('承認', paused.sessionId);
    expect(h.toolResults().at(-1)).toEqual({ name: 'call_tool', content: expect.stringMatching(/logging/i) });
  });
});

describe('a 2026-07-28 server: another instance of this service as the agent tools', () => {
  const peerOllama = new ScriptedOllama();
  let peer: ServiceProcess;
  const h = new Harness(() => ({ agent: { mcp_servers: { peer: { url: peer.url } } } }));
  beforeAll(async () => {
    await peerOllama.start();
    peer = await new ServiceProcess((await writeConfig(peerOllama.url)).file).start();
    await h.start();
  }, 30_000);
  afterAll(async () => {
    await h.stop();
    await peer.stop();
    await peerOllama.stop();
  });

  it('connects in the modern era and calls its tools', async () => {
    const { servers } = await h.admin('/admin/mcp-servers');
    expect(servers[0]).toMatchObject({ name: 'peer', state: 'connected', protocol: '2026-07-28', tools: ['agent_run', 'agent_status'] });
    h.ollama.enqueue(calls(['peer__agent_run', { request: 'hello peer' }]), { content: 'delegated', promptEvalCount: 10, evalCount: 5 });
    await h.run('delegate');
    expect(h.toolResults()[0].content).toContain('task_id:');
    // The peer queued and ran the Task the agent gave it.
    await peerOllama.waitForChats(1);
  });
});

describe('the doctor and /readyz with MCP servers', () => {
  const ollama = new ScriptedOllama();
  beforeAll(() => ollama.start());
  afterAll(() => ollama.stop());

  it('the doctor lists each server: connected with its tools, or why not; a required one down fails it', async () => {
    const { file } = await writeConfig(ollama.url, {
      agent: {
        mcp_servers: {
          memory: { ...stdio(MEMORY), env: { MEMORY_FILE_PATH: join(mkdtempSync(join(tmpdir(), 'oam-memory-')), 'm.jsonl') } },
          broken: { command: '/nonexistent/server' },
          gone: { url: `http://127.0.0.1:${await freePort()}/mcp`, required: true },
        },
      },
    });
    const result = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, ['dist/doctor.js'], { env: { PATH: process.env.PATH, AGENT_CONFIG: file }, stdio: ['ignore', 'pipe', 'ignore'] });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.on('exit', (code) => resolve({ code, stdout }));
    });
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.find((line) => line.includes('mcp server memory'))).toMatch(/^ok {4}mcp server memory: connected \(2025-11-25\), 9 tools: create_entities, /);
    expect(lines.find((line) => line.includes('mcp server broken'))).toMatch(/^warn {2}mcp server broken: cannot connect: .*ENOENT.* \(optional: the agent runs without it\)$/);
    expect(lines.find((line) => line.includes('mcp server gone'))).toMatch(/^fail {2}mcp server gone: cannot connect: /);
    expect(result.code).toBe(1);
  }, 60_000);

  it('/readyz stays ready with an optional server down, and is not ready while a required one is', async () => {
    for (const required of [false, true]) {
      const { file } = await writeConfig(ollama.url, { agent: { mcp_servers: { gone: { url: `http://127.0.0.1:${await freePort()}/mcp`, required } } } });
      const service = await new ServiceProcess(file).start();
      const response = await fetch(service.url.replace(/\/mcp$/, '/readyz'));
      const body = (await response.json()) as { status: string; checks: Record<string, string> };
      await service.stop();
      expect(response.status).toBe(required ? 503 : 200);
      expect(body.checks).toEqual(required ? { database: 'ok', ollama: 'ok', mcp_servers: 'unavailable' } : { database: 'ok', ollama: 'ok' });
    }
  }, 60_000);
});

describe('sandbox: true: one sandboxed process per session, bound to its workspace, stopped when the Task ends', () => {
  const repository = join(import.meta.dirname, '../..');
  const h = new Harness(() => ({
    agent: {
      mcp_servers: {
        // The servers' code is in the repository: their cwd, bound read-only into the sandbox.
        boxed: { command: '/usr/bin/node', args: [FILESYSTEM], cwd: repository, sandbox: true, tools: { allow: ['write_file', 'read_text_file', 'list_allowed_directories'] } },
        boxenv: { command: '/usr/bin/node', args: [EVERYTHING, 'stdio'], cwd: repository, sandbox: true, env: { LISTED: 'yes' }, tools: { allow: ['get-env'] } },
      },
    },
  }));
  beforeAll(() => h.start(), 30_000);
  afterAll(() => h.stop());

  it('works in the session workspace only, sees only the sandbox environment, and ends with the Task', async () => {
    const { servers } = await h.admin('/admin/mcp-servers');
    expect(servers.map((server: any) => [server.name, server.state, server.last_error])).toEqual([['boxed', 'connected', null], ['boxenv', 'connected', null]]);
    const before = h.serverPids('bwrap').length;
    h.ollama.enqueue(calls(['boxed__list_allowed_directories', {}], ['boxenv__get-env', {}]));
    h.ollama.enqueue({ content: 'listed', promptEvalCount: 10, evalCount: 5 });
    const first = await h.run('where can you write');
    const workspace = join(h.config.workspace, 'sessions', first.sessionId);
    const [allowed, env] = h.toolResults().map((result) => result.content);
    expect(allowed).toBe(`Allowed directories:\n${workspace}`);
    // The commands' environment (the shell adds PWD), plus what the server's env lists.
    expect(JSON.parse(env)).toEqual({ PATH: '/usr/local/bin:/usr/bin:/bin', HOME: workspace, LANG: 'C.UTF-8', TERM: 'dumb', TZ: 'UTC', PWD: workspace, LISTED: 'yes' });
    // The session's processes are gone with its Task; the listing ones stay.
    expect(h.serverPids('bwrap').length).toBe(before);

    h.ollama.enqueue(
      calls(['boxed__write_file', { path: join(workspace, 'boxed.txt'), content: 'inside' }], ['boxed__read_text_file', { path: h.config.file }]),
      { content: 'wrote', promptEvalCount: 10, evalCount: 5 },
    );
    await h.run('write', first.sessionId);
    expect(readFileSync(join(workspace, 'boxed.txt'), 'utf8')).toBe('inside');
    expect(h.toolResults()[1].content).toMatch(/^Error: /);
  });
});
