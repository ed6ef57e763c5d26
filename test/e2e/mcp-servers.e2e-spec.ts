import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { fieldsOf, modernClient, modernMeta, httpRawDispatch, textOf, waitForTerminal } from '../support/mcp-clients.js';
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
  beforeAll(() => h.start(), 30_000);
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
      ...['list_dir', 'read_file', 'write_file', 'edit_file', 'glob', 'grep', 'run_command'],
      ...['everything__echo', 'everything__get-env', 'everything__get-structured-content', 'everything__get-sum', 'everything__get-tiny-image', 'everything__get-roots-list'],
      ...['memory__create_entities', 'memory__read_graph', 'files__write_file', 'files__list_allowed_directories'],
    ]);
    const echo = first.body.tools!.find((tool) => tool.function.name === 'everything__echo') as any;
    expect(echo.function.parameters).toEqual({ type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] });
    const results = Object.fromEntries(h.toolResults().map((result) => [result.name, result.content]));
    expect(results['everything__echo']).toBe('Echo: ping');
    expect(results['everything__get-sum']).toContain('The sum of 2 and 40 is 42.');
    expect(results['everything__get-tiny-image']).toMatch(/\[image image\/png, \d+ bytes\]/);
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
});
