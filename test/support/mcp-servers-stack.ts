import { beforeAll } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { probe } from './database-probe.js';
import { useStack, type E2eStack } from './e2e-stack.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from './mcp-clients.js';
import type { RecordedChat, ScriptedOllama } from './scripted-ollama.js';
import { freePort } from './service-process.js';

/**
 * What the e2e files of the agent with other MCP servers as its tools share (mcp-servers*.e2e-spec.ts):
 * the reference servers from the npm registry, as they are (server-everything over stdio and Streamable
 * HTTP, server-memory and server-filesystem over stdio), and a service with them configured behind a
 * scripted model that calls their tools.
 */

const MODULES = join(import.meta.dirname, '../../node_modules/@modelcontextprotocol');
export const EVERYTHING = join(MODULES, 'server-everything/dist/index.js');
export const MEMORY = join(MODULES, 'server-memory/dist/index.js');
export const FILESYSTEM = join(MODULES, 'server-filesystem/dist/index.js');
export const ADMIN_TOKEN = 'mcp-servers-admin-token-0123456789';
/** In the service's own environment: no MCP server may see it. */
export const SERVICE_SECRET = 'service-secret-value-that-must-not-leak';

/** A scripted model turn that calls these tools. */
export const calls = (...list: [string, Record<string, unknown>][]) => ({ toolCalls: list.map(([name, args]) => ({ name, arguments: args })), promptEvalCount: 10, evalCount: 5 });
/** A scripted model turn that answers. */
export const answer = (content: string) => ({ content, promptEvalCount: 10, evalCount: 5 });
export const stdio = (script: string, args: string[] = []) => ({ command: process.execPath, args: [script, ...args] });
export const toolNames = (chat: RecordedChat) => (chat.body.tools ?? []).map((tool) => tool.function.name);

/** One service with MCP servers configured (a stack of useStack), a client, and probes of its database. */
export class McpStack {
  client!: Client;

  constructor(readonly stack: E2eStack) {}

  get ollama(): ScriptedOllama {
    return this.stack.ollama;
  }

  get service() {
    return this.stack.service;
  }

  get config() {
    return this.stack.config;
  }

  get db() {
    return this.stack.database;
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
    const response = await fetch(`${this.stack.base}${path}`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    return response.json();
  }

  audit(taskId: string, action = 'mcp_tool.call'): Promise<{ outcome: string; detail: string }[]> {
    return probe(this.db, 'SELECT outcome, detail FROM audit_events WHERE action = ? AND task_id = ? ORDER BY seq', action, taskId);
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

/**
 * The service for the enclosing describe block, with `overrides` over the test config (read when it starts,
 * so a server started in an earlier beforeAll can be named), the admin token, a secret in its own
 * environment, and an MCP client sending `headers`.
 */
export function useMcpStack(overrides: () => Record<string, unknown>, options: { headers?: Record<string, string>; ollama?: (ollama: ScriptedOllama) => void } = {}): McpStack {
  const stack = useStack({
    config: () => ({ auth: { admin_token: ADMIN_TOKEN }, ...overrides() }),
    env: { SERVICE_SECRET, AGENT__OLLAMA__KEEP_ALIVE: '29m' },
    ...(options.ollama ? { ollama: options.ollama } : {}),
  });
  const mcp = new McpStack(stack);
  beforeAll(async () => {
    mcp.client = stack.closeOnStop(await modernClient(stack.service.url, options.headers));
  });
  return mcp;
}

/** A Streamable HTTP server-everything on a free port, behind a recording forwarder (to see the headers it gets). */
export class HttpEverything {
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
