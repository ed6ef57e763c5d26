import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer of /api/chat. */
export interface ScriptedReply {
  content?: string;
  promptEvalCount?: number;
  evalCount?: number;
  /** Milliseconds before the answer starts (and between streamed chunks' halves). */
  delayMs?: number;
  /** Answer with this HTTP status and an Ollama-style `{error}` body instead. */
  status?: number;
  error?: string;
  /** Accept the request and never answer. */
  hang?: boolean;
  /** Answer 200 with a body that is not Ollama's JSON at all. */
  garbage?: boolean;
  /** Native tool calls of the answer (`message.tool_calls`). */
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
}

/** The answer to a planning call (a chat request with a `format` schema) when no plan is scripted. */
export const DIRECT_PLAN: ScriptedReply = { content: '{"mode":"direct","subtasks":[]}' };

export interface RecordedChat {
  body: {
    model: string;
    messages: { role: string; content: string; images?: string[]; tool_calls?: unknown[]; tool_name?: string }[];
    stream?: boolean;
    options?: Record<string, unknown>;
    keep_alive?: unknown;
    tools?: { function: { name: string } }[];
    format?: unknown;
  };
  aborted: boolean;
}

/**
 * An Ollama-compatible HTTP server for tests: /api/chat (NDJSON streaming and not), /api/show,
 * /api/tags, /api/version. Answers come from a script; it records every chat request and the
 * highest number of chats it ever served at once.
 */
export class ScriptedOllama {
  readonly chats: RecordedChat[] = [];
  maxConcurrentChats = 0;
  capabilities = ['completion', 'tools'];
  models = ['test-model:latest'];
  private active = 0;
  private script: ScriptedReply[] = [];
  private plans: ScriptedReply[] = [];
  private fallback: ScriptedReply = { content: 'scripted answer', promptEvalCount: 10, evalCount: 5 };
  private server: Server | null = null;
  private readonly waiters: (() => void)[] = [];

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  get activeChats(): number {
    return this.active;
  }

  /** Answers for the next chat calls, in order; after them the fallback answer is used. */
  enqueue(...replies: ScriptedReply[]): void {
    this.script.push(...replies);
  }

  /** Answers for the next planning calls (requests with `format`); after them, the direct plan. */
  enqueuePlan(...replies: ScriptedReply[]): void {
    this.plans.push(...replies);
  }

  /** Chat requests that were not planning calls. */
  get workChats(): RecordedChat[] {
    return this.chats.filter((chat) => chat.body.format === undefined);
  }

  setFallback(reply: ScriptedReply): void {
    this.fallback = reply;
  }

  /** Resolves once `count` work (non-planning) chat requests have arrived in total. */
  async waitForChats(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.workChats.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} chat requests, got ${this.workChats.length}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.route(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    switch (req.url) {
      case '/api/version':
        return json(res, 200, { version: '0.12.0' });
      case '/api/tags':
        return json(res, 200, { models: this.models.map((name) => ({ name, model: name, size: 1, digest: 'x' })) });
      case '/api/show':
        if (!this.knows(body.model)) return json(res, 404, { error: `model '${body.model}' not found` });
        return json(res, 200, { capabilities: this.capabilities, details: { family: 'test' }, model_info: {} });
      case '/api/chat':
        return this.chat(req, res, body as RecordedChat['body']);
      default:
        return json(res, 404, { error: 'not found' });
    }
  }

  private knows(model: unknown): boolean {
    return typeof model === 'string' && this.models.some((name) => name === model || name === `${model}:latest`);
  }

  private async chat(req: IncomingMessage, res: ServerResponse, body: RecordedChat['body']): Promise<void> {
    const record: RecordedChat = { body, aborted: false };
    this.chats.push(record);
    this.waiters.splice(0).forEach((wake) => wake());
    this.active += 1;
    this.maxConcurrentChats = Math.max(this.maxConcurrentChats, this.active);
    let closed = false;
    res.on('close', () => {
      closed = true;
      if (!res.writableFinished) record.aborted = true;
    });
    try {
      if (!this.knows(body.model)) return json(res, 404, { error: `model '${body.model}' not found, try pulling it first` });
      const reply = body.format !== undefined ? (this.plans.shift() ?? DIRECT_PLAN) : (this.script.shift() ?? this.fallback);
      if (reply.hang) {
        await new Promise<void>((resolve) => res.on('close', () => resolve()));
        return;
      }
      await pause(reply.delayMs ?? 0, res);
      if (closed) return;
      if (reply.status) return json(res, reply.status, { error: reply.error ?? 'scripted failure' });
      if (reply.garbage) {
        res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
        return void res.end('<html>502 Bad Gateway from some proxy</html>\n');
      }
      const content = reply.content ?? '';
      const toolCalls = reply.toolCalls?.map((call, index) => ({ id: `call_${this.chats.length}_${index}`, function: { index, ...call } }));
      const final = {
        model: body.model,
        created_at: new Date().toISOString(),
        message: { role: 'assistant', content: '' },
        done: true,
        done_reason: 'stop',
        prompt_eval_count: reply.promptEvalCount ?? 0,
        eval_count: reply.evalCount ?? 0,
      };
      if (body.stream === false) {
        return json(res, 200, { ...final, message: { role: 'assistant', content, ...(toolCalls ? { tool_calls: toolCalls } : {}) } });
      }
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      const half = Math.ceil(content.length / 2);
      for (const part of [content.slice(0, half), content.slice(half)]) {
        const chunk = { model: body.model, created_at: final.created_at, message: { role: 'assistant', content: part }, done: false };
        res.write(`${JSON.stringify(chunk)}\n`);
        await pause((reply.delayMs ?? 0) / 2, res);
        if (closed) return;
      }
      if (toolCalls) {
        // Ollama sends a tool call whole, in one chunk of its own.
        const chunk = { model: body.model, created_at: final.created_at, message: { role: 'assistant', content: '', tool_calls: toolCalls }, done: false };
        res.write(`${JSON.stringify(chunk)}\n`);
      }
      res.end(`${JSON.stringify(final)}\n`);
    } finally {
      this.active -= 1;
    }
  }
}

/**
 * Waits `ms`, or less once the client has gone away: a scripted delay whose caller aborted must not keep
 * its timer (and so the test process) alive after the test.
 */
function pause(ms: number, res: ServerResponse): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once('close', done);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}
