import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One scripted answer of /api/chat. */
export interface ScriptedReply {
  content?: string;
  /** Reasoning the model produces; where it lands depends on `think` and the capability (see `chat`). */
  thinking?: string;
  promptEvalCount?: number;
  /** Generated tokens; real Ollama counts thinking tokens in it too, so scripts give the total. */
  evalCount?: number;
  /** `stop` unless given; `length` is what Ollama reports when `num_predict` or the context cut the answer. */
  doneReason?: string;
  /** Milliseconds before the answer starts (and between streamed chunks' halves). */
  delayMs?: number;
  /** Answer with this HTTP status and an Ollama-style `{error}` body instead. */
  status?: number;
  error?: string;
  /** Accept the request and never answer. */
  hang?: boolean;
  /**
   * Answer only once this settles (then after `delayMs`): a test holds the agent at a step until it has seen that
   * step from outside, instead of racing a delay against a page or a client that polls.
   */
  heldUntil?: Promise<unknown>;
  /**
   * Hold the stream before chunk `index` (of `chunks`) until `until` settles: a test that must see a partial
   * answer while it is written holds the rest back until it has (keep the hold under the service's
   * `ollama.stall_timeout_ms`, or the service takes it for a stalled runner).
   */
  holdBeforeChunk?: { index: number; until: Promise<unknown> };
  /** Stream the first half of the content, then send nothing more (a runner stuck mid-answer). */
  stall?: boolean;
  /** Answer 200 with a body that is not Ollama's JSON at all. */
  garbage?: boolean;
  /**
   * The content streamed as these chunks, `chunkDelayMs` apart, instead of two halves: real Ollama sends
   * about one token a chunk (qwen3:8b on v0.12.10: `"message":{"role":"assistant","content":" the"}`),
   * each chunk the same shape as below.
   */
  chunks?: string[];
  chunkDelayMs?: number;
  /** Native tool calls of the answer (`message.tool_calls`). */
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
}

/**
 * The answer to a planning call (a chat request with a `format` schema) when no plan is scripted. The agent
 * makes none since issue 19; bench/agent-calls.ts scripts one for the build before it (main a291e1a).
 */
export const DIRECT_PLAN: ScriptedReply = { content: '{"mode":"direct","subtasks":[]}' };

export interface RecordedChat {
  body: {
    model: string;
    messages: { role: string; content: string; thinking?: string; images?: string[]; tool_calls?: unknown[]; tool_name?: string }[];
    stream?: boolean;
    options?: Record<string, unknown>;
    keep_alive?: unknown;
    tools?: { function: { name: string } }[];
    format?: unknown;
    think?: boolean | string;
  };
  aborted: boolean;
  /** The prompt's size by this server's count (4 characters a token, 768 per image, like Ollama's estimate). */
  promptTokens: number;
}

/**
 * Ollama's own image estimate when it fits a prompt into the context (server/prompt.go, v0.5 to v0.33).
 * Tokens of text are counted at 4 characters each: a stand-in tokenizer, close to what BPE tokenizers of
 * qwen3 and llama3 give for English and code.
 */
const IMAGE_TOKENS = 768;

/**
 * An Ollama-compatible HTTP server for tests: /api/chat (NDJSON streaming and not), /api/show,
 * /api/tags, /api/version. Answers come from a script; it records every chat request and the
 * highest number of chats it ever served at once. Status codes, error texts, content types and JSON
 * field order are those of Ollama's server/routes.go and api/types.go (checked against v0.33.0-rc2,
 * 2026-08-21; the version each behaviour dates from is named next to it).
 */
export class ScriptedOllama {
  readonly chats: RecordedChat[] = [];
  maxConcurrentChats = 0;
  /** When (performance.now()) the first content chunk of each streamed work chat was written, for latency figures. */
  readonly firstContentAt: number[] = [];
  capabilities = ['completion', 'tools'];
  models = ['test-model:latest'];
  /** What `/api/version` answers. */
  version = '0.12.10';
  /** The model's trained context, `model_info["<family>.context_length"]` of `/api/show`. */
  contextLength = 40_960;
  family = 'qwen3';
  private active = 0;
  private script: ScriptedReply[] = [];
  private plans: ScriptedReply[] = [];
  private fallback: ScriptedReply = { content: 'scripted answer', promptEvalCount: 10, evalCount: 5 };
  /**
   * A scripted "model" that answers from the conversation itself (the eval's models of known quality):
   * asked before the queue for every work chat; `undefined` leaves that chat to the queue.
   */
  respond: ((body: RecordedChat['body']) => ScriptedReply | undefined) | null = null;
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

  /** Chat requests that were not planning calls (all of them, for the agent since issue 19). */
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

  /** Resolves once `condition()` holds, checked whenever a chat arrives, ends, or its connection closes. */
  async until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`scripted Ollama: condition not met within ${timeoutMs} ms`);
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
        return json(res, 200, { version: this.version });
      case '/api/tags':
        return json(res, 200, {
          models: this.models.map((name) => ({
            name,
            model: name,
            modified_at: '2026-11-30T09:12:44.5+01:00',
            size: 5_225_388_164,
            digest: 'a3de86cd1c13',
            details: this.details(),
          })),
        });
      case '/api/show':
        // v0.1.21 to v0.33: 404 with the model name as given, in single quotes.
        if (!this.knows(body.model)) return json(res, 404, { error: `model '${String(body.model)}' not found` });
        // `capabilities` since v0.6.4; `model_info` keys are prefixed by the architecture (qwen3.context_length).
        return json(res, 200, {
          modelfile: `# Modelfile generated by "ollama show"\nFROM ${String(body.model)}\n`,
          parameters: 'temperature 0.6\ntop_k 20',
          template: '{{- range .Messages }}…{{ end }}',
          details: this.details(),
          model_info: {
            'general.architecture': this.family,
            'general.parameter_count': 8_190_735_360,
            [`${this.family}.context_length`]: this.contextLength,
            [`${this.family}.embedding_length`]: 4096,
          },
          capabilities: this.capabilities,
          modified_at: '2026-11-30T09:12:44.5+01:00',
        });
      case '/api/chat':
        return this.chat(res, body as RecordedChat['body']);
      default:
        // gin's default 404 is plain text, not JSON.
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        return void res.end('404 page not found');
    }
  }

  private details() {
    return { parent_model: '', format: 'gguf', family: this.family, families: [this.family], parameter_size: '8.2B', quantization_level: 'Q4_K_M' };
  }

  private knows(model: unknown): boolean {
    return typeof model === 'string' && this.models.some((name) => name === model || name === `${model}:latest`);
  }

  private fullName(model: string): string {
    return `registry.ollama.ai/library/${model.includes(':') ? model : `${model}:latest`}`;
  }

  private async chat(res: ServerResponse, body: RecordedChat['body']): Promise<void> {
    const record: RecordedChat = { body, aborted: false, promptTokens: promptTokens(body) };
    this.chats.push(record);
    this.waiters.splice(0).forEach((wake) => wake());
    this.active += 1;
    this.maxConcurrentChats = Math.max(this.maxConcurrentChats, this.active);
    let closed = false;
    res.on('close', () => {
      closed = true;
      if (!res.writableFinished) record.aborted = true;
      this.waiters.splice(0).forEach((wake) => wake());
    });
    try {
      // v0.1.21 to v0.33 (ChatHandler): an unknown model is 404 with the name as given.
      if (!this.knows(body.model)) return json(res, 404, { error: `model '${body.model}' not found` });
      const thinkingModel = this.capabilities.includes('thinking');
      const thinkOn = body.think === true || ['low', 'medium', 'high', 'max'].includes(String(body.think));
      // v0.9.0 to v0.33: think sent to a model without the capability is 400, the name in Go's %q quotes
      // (`think: false` has been accepted since v0.12.5).
      if (thinkOn && !thinkingModel) return json(res, 400, { error: `"${body.model}" does not support thinking` });
      // v0.3.0 to v0.33 (CheckCapabilities via scheduleRunner): tools for a model whose template has none
      // is 400 with the full registry name, e.g. llama3.2-vision, gemma2, deepseek-r1:8b.
      if (body.tools?.length && !this.capabilities.includes('tools')) {
        return json(res, 400, { error: `${this.fullName(body.model)} does not support tools` });
      }
      const reply = body.format !== undefined ? (this.plans.shift() ?? DIRECT_PLAN) : (this.respond?.(body) ?? this.script.shift() ?? this.fallback);
      if (reply.hang) {
        await new Promise<void>((resolve) => res.on('close', () => resolve()));
        return;
      }
      if (reply.heldUntil) await settledOrClosed(reply.heldUntil, res);
      await pause(reply.delayMs ?? 0, res);
      if (closed) return;
      if (reply.status) return json(res, reply.status, { error: reply.error ?? 'scripted failure' });
      if (reply.garbage) {
        res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
        return void res.end('<html>502 Bad Gateway from some proxy</html>\n');
      }
      // A thinking model thinks unless told `think: false` (v0.9.0+ sets think=true when it is absent) and
      // its reasoning comes apart in `message.thinking`. Otherwise the reasoning stays in the text as
      // `<think>…</think>`, as deepseek-r1 and qwen3 templates before v0.9.0 did (ollama-python#529).
      const separate = thinkingModel && body.think !== false;
      const thinking = separate ? (reply.thinking ?? '') : '';
      const content =
        !separate && reply.thinking ? `<think>${reply.thinking}</think>\n\n${reply.content ?? reply.chunks?.join('') ?? ''}` : (reply.content ?? reply.chunks?.join('') ?? '');
      // Tool call ids are "call_" and 8 random lower-case characters (v0.12.10+).
      const toolCalls = reply.toolCalls?.map((call, index) => ({ id: `call_${randomId()}`, function: { index, name: call.name, arguments: call.arguments } }));
      const createdAt = new Date().toISOString();
      // api.ChatResponse field order; zero metrics are left out (`omitempty`), done_reason likewise.
      const final = {
        model: body.model,
        created_at: createdAt,
        message: { role: 'assistant', content: '' },
        done: true,
        done_reason: reply.doneReason ?? 'stop',
        total_duration: 1_503_000_000,
        load_duration: 21_000_000,
        ...(reply.promptEvalCount ? { prompt_eval_count: reply.promptEvalCount } : {}),
        prompt_eval_duration: 80_000_000,
        ...(reply.evalCount ? { eval_count: reply.evalCount } : {}),
        eval_duration: 1_400_000_000,
      };
      if (body.stream === false) {
        const message = { role: 'assistant', content, ...(thinking ? { thinking } : {}), ...(toolCalls ? { tool_calls: toolCalls } : {}) };
        return json(res, 200, { ...final, message });
      }
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      const chunk = (message: Record<string, unknown>) =>
        `${JSON.stringify({ model: body.model, created_at: createdAt, message: { role: 'assistant', content: '', ...message }, done: false })}\n`;
      // Thinking streams first, in chunks of its own with empty content (v0.9.0+).
      if (thinking) res.write(chunk({ thinking }));
      const half = Math.ceil(content.length / 2);
      const parts = reply.chunks ?? [content.slice(0, half), content.slice(half)];
      for (const [index, part] of parts.entries()) {
        if (reply.holdBeforeChunk?.index === index) await settledOrClosed(reply.holdBeforeChunk.until, res);
        if (closed) return;
        res.write(chunk({ content: part }));
        if (index === 0 && body.format === undefined) this.firstContentAt.push(performance.now());
        if (reply.stall && index === 0) {
          await new Promise<void>((resolve) => res.on('close', () => resolve()));
          return;
        }
        await pause(reply.chunks ? (reply.chunkDelayMs ?? 0) : (reply.delayMs ?? 0) / 2, res);
        if (closed) return;
      }
      // Ollama sends a tool call whole, in one chunk of its own (v0.8.0+, #11633).
      if (toolCalls) res.write(chunk({ tool_calls: toolCalls }));
      res.end(`${JSON.stringify(final)}\n`);
    } finally {
      this.active -= 1;
      this.waiters.splice(0).forEach((wake) => wake());
    }
  }
}

function promptTokens(body: RecordedChat['body']): number {
  const text = (body.messages ?? []).reduce((sum, message) => sum + (message.content?.length ?? 0) + (message.thinking?.length ?? 0), 0);
  const images = (body.messages ?? []).reduce((sum, message) => sum + (message.images?.length ?? 0), 0);
  return Math.ceil((text + JSON.stringify(body.tools ?? []).length) / 4) + images * IMAGE_TOKENS;
}

function randomId(): string {
  return Math.random().toString(36).slice(2, 10).padEnd(8, 'x');
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

/** Waits until `gate` settles (a test's hold on a reply), or until the client has gone: a held reply never outlives its request. */
function settledOrClosed(gate: Promise<unknown>, res: ServerResponse): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('close', done);
      resolve();
    };
    res.once('close', done);
    gate.then(done, done);
  });
}

/** gin's c.JSON: `application/json; charset=utf-8`, as every Ollama JSON answer and error carries. */
function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
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
