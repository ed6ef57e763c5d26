import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SEED } from './baseline.js';
import type { EvalCase, OllamaTarget } from './case.js';
import { EVAL_SERVERS } from './eval-tools.js';
import { addRepairs, type CaseOutcome, type Repairs } from './report.js';
import { verify, writeFixture, type EvalSandbox } from './workspace.js';

const PROTOCOL = '2026-07-28';
const TERMINAL = ['completed', 'failed', 'cancelled'];

export interface ServiceOptions {
  root: string;
  ollama: OllamaTarget;
  model: string;
  timeoutMs: number;
  /** The operator's `workspace.sandbox`, resolved: the service runs the agent's commands in it, the eval its verifiers. */
  sandbox: EvalSandbox & { setting: 'auto' | 'bubblewrap' | 'none' };
}

/** What one Task of a case came to. */
interface Followed {
  status: Record<string, string>;
  timedOut: boolean;
  trace: TraceStep[];
}

interface TraceStep {
  kind: string;
  name: string;
  outcome: string;
  detail: { doneReason?: string; toolCalls?: string[] } | null;
}

/**
 * The built service (`dist/main.js`) on a configuration of its own in `dir`: a fresh SQLite database, a
 * session-isolated workspace whose template is each case's fixture, temperature 0. Cases run one after another,
 * so rewriting the template before each agent_run is what the next session's workspace starts from.
 */
export class ServiceRunner {
  private child: ChildProcess | null = null;
  private client: Client | null = null;
  private output = '';
  private port = 0;
  /** The admin API's token: the trace of a Task and its cancellation go through it. */
  private readonly adminToken = randomBytes(24).toString('hex');

  constructor(
    private readonly dir: string,
    private readonly options: ServiceOptions,
  ) {}

  private get template(): string {
    return join(this.dir, 'template');
  }

  private get adminHeaders(): Record<string, string> {
    return { Authorization: `Bearer ${this.adminToken}` };
  }

  private get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.port = await freePort();
    mkdirSync(this.template, { recursive: true });
    mkdirSync(join(this.dir, 'workspace'), { recursive: true });
    const config = {
      server: { host: '127.0.0.1', port: this.port },
      // The case's own bound decides; the service's request timeout only must not come first.
      ollama: {
        host: this.options.ollama.host,
        headers: this.options.ollama.headers,
        model: this.options.model,
        temperature: 0,
        seed: SEED,
        request_timeout_ms: this.options.timeoutMs + 1000,
      },
      database: { type: 'sqlite', path: join(this.dir, 'eval.sqlite') },
      // Stopped at the end or by Ctrl-C, the service need not let a case's Task finish: nothing more is measured.
      queue: { poll_interval_ms: 100, progress_poll_ms: 200, shutdown_grace_ms: 0 },
      workspace: { root: join(this.dir, 'workspace'), isolation: 'session', template: this.template, sandbox: this.options.sandbox.setting },
      // The eval's own MCP servers (eval-tools.ts): a case may need one of their tools; eval-release asks first.
      agent: {
        mcp_servers: Object.fromEntries(
          Object.entries(EVAL_SERVERS).map(([name, spec]) => [
            name,
            { command: process.execPath, args: [join(this.options.root, 'dist/eval-tools.js'), name], approval: spec.approval },
          ]),
        ),
      },
      mcp: { locale: 'en', tasks: { poll_interval_ms: 100 } },
      auth: { admin_token: this.adminToken },
    };
    // JSON is YAML: the service reads it as its agent.yaml.
    const file = join(this.dir, 'agent.yaml');
    writeFileSync(file, JSON.stringify(config, null, 2));
    this.child = spawn(process.execPath, [join(this.options.root, 'dist/main.js')], {
      cwd: this.options.root,
      env: { PATH: process.env.PATH, NO_COLOR: '1', AGENT_CONFIG: file },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await this.listening();
    this.client = new Client({ name: 'ollama-agent-mcp-eval', version: '1.0.0' }, { versionNegotiation: { mode: { pin: PROTOCOL } } });
    await this.client.connect(new StreamableHTTPClientTransport(new URL(`${this.base}/mcp`)));
  }

  private listening(): Promise<void> {
    const child = this.child!;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the service did not start within 60 s:\n${this.output}`)), 60_000);
      const onData = (chunk: Buffer) => {
        this.output = (this.output + chunk.toString()).slice(-20_000);
        if (/listening: MCP endpoint/.test(this.output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the service exited (${code}):\n${this.output}`));
      });
    });
  }

  async stop(): Promise<void> {
    await this.client?.close().catch(() => undefined);
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  }

  /**
   * One case as an MCP client would hand it over: agent_run in a new session, agent_status until it ends or the
   * bound passes. A case whose approval the eval denies gets `deny` as the session's next agent_run, the answer
   * every client can give in the conversation, and that Task's answer is the case's.
   */
  async run(item: EvalCase): Promise<CaseOutcome> {
    writeFixture(this.template, item);
    const started = performance.now();
    const deadline = Date.now() + this.options.timeoutMs;
    const accepted = fields(await this.call('agent_run', { request: item.request }));
    const tasks = [await this.follow(accepted.task_id, deadline)];
    const failed: string[] = [];
    if (item.approval === 'deny' && !tasks[0].timedOut) {
      if (await this.pendingApproval(accepted.session_id)) {
        const denied = fields(await this.call('agent_run', { request: 'deny', session_id: accepted.session_id }));
        tasks.push(await this.follow(denied.task_id, deadline));
      } else failed.push('no approval was asked');
    }
    const wallMs = Math.round(performance.now() - started);
    const last = tasks.at(-1)!;
    const answer = last.status.result ?? '';
    const workspace = join(this.dir, 'workspace', 'sessions', accepted.session_id);
    if (last.timedOut) failed.unshift(`no end within ${this.options.timeoutMs} ms`);
    else if (last.status.status !== 'completed') failed.unshift(`task ${last.status.status}: ${answer.slice(0, 200)}`);
    if (!last.timedOut) failed.push(...(await verify(item, workspace, answer, this.options.sandbox)));
    const sum = (pick: (task: Followed) => number) => tasks.reduce((total, task) => total + pick(task), 0);
    const usage = (task: Followed) => /input=(\d+) output=(\d+)/.exec(task.status.token_usage ?? '');
    const repairs = tasks.map((task) => repairsOf(task.trace, task.status.result ?? ''));
    return {
      passed: failed.length === 0,
      failed,
      modelCalls: sum((task) => task.trace.filter((step) => step.kind === 'model_call' && step.outcome === 'ok').length),
      promptTokens: sum((task) => Number(usage(task)?.[1] ?? 0)),
      outputTokens: sum((task) => Number(usage(task)?.[2] ?? 0)),
      wallMs,
      repairs: addRepairs(repairs),
    };
  }

  /** agent_status until the Task ends or `deadline` passes (then it is cancelled); its last status and its trace. */
  private async follow(taskId: string, deadline: number): Promise<Followed> {
    let status = fields(await this.call('agent_status', { task_id: taskId }));
    while (!TERMINAL.includes(status.status) && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 200));
      status = fields(await this.call('agent_status', { task_id: taskId }));
    }
    const timedOut = !TERMINAL.includes(status.status);
    if (timedOut) await this.cancel(taskId);
    return { status, timedOut, trace: await this.trace(taskId) };
  }

  /** Whether the session's Task ended waiting for a person's approval (the admin API's view of the session). */
  private async pendingApproval(sessionId: string): Promise<boolean> {
    const res = await fetch(`${this.base}/admin/sessions/${sessionId}/approval`, { headers: this.adminHeaders });
    if (!res.ok) throw new Error(`GET /admin/sessions/${sessionId}/approval answered ${res.status}`);
    return ((await res.json()) as { pending: unknown }).pending !== null;
  }

  /** A case past its bound is cancelled, and waited for (bounded), so the next case does not queue behind it. */
  private async cancel(taskId: string): Promise<void> {
    await fetch(`${this.base}/admin/tasks/${taskId}/cancel`, { method: 'POST', headers: this.adminHeaders }).catch(() => undefined);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (TERMINAL.includes(fields(await this.call('agent_status', { task_id: taskId })).status)) return;
      await new Promise((done) => setTimeout(done, 200));
    }
  }

  private async trace(taskId: string): Promise<TraceStep[]> {
    const res = await fetch(`${this.base}/admin/tasks/${taskId}`, { headers: this.adminHeaders }).catch(() => null);
    if (!res?.ok) return [];
    return ((await res.json()) as { trace?: TraceStep[] }).trace ?? [];
  }

  private async call(name: string, args: Record<string, unknown>): Promise<string> {
    const result = (await this.client!.callTool({ name, arguments: args })) as { content?: { type: string; text?: string }[] };
    return (result.content ?? []).map((block) => block.text ?? '').join('\n');
  }
}

/**
 * The repairs the trace shows: the service's `repair` steps (calls recovered from the text, string arguments
 * parsed, compactions), a model call cut off (`done_reason` length) that the service continued, and a repeated
 * call it stopped (the Task's answer says so).
 */
export function repairsOf(trace: TraceStep[], answer: string): Repairs {
  const repairs = (name: string) => trace.filter((step) => step.kind === 'repair' && step.name === name).length;
  return {
    textToolCalls: repairs('text_tool_calls'),
    stringArguments: repairs('string_arguments'),
    continuations: trace.filter((step) => step.kind === 'model_call' && step.outcome === 'ok' && step.detail?.doneReason === 'length').length,
    repeatsStopped: /repeated the same call/.test(answer) ? 1 : 0,
    compactions: repairs('compaction'),
  };
}

/** The `key: value` lines of an agent_run / agent_status text; `result` runs to the end. */
function fields(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    const match = /^([a-z_]+):\s?(.*)$/.exec(line);
    if (!match) continue;
    if (match[1] === 'result') {
      out.result = [match[2], ...lines.slice(index + 1)].join('\n');
      break;
    }
    out[match[1]] = match[2];
  }
  return out;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  return port;
}
