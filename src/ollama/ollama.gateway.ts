import { Injectable } from '@nestjs/common';
import { Ollama, type Message, type Tool } from 'ollama';
import { AppConfig } from '../config/app-config.js';
import { OllamaError, toOllamaError } from './ollama-error.js';

/** A tool call as Ollama returns it; `id` (newer servers) is echoed back as the result's `tool_call_id`. */
export interface ChatToolCall {
  id?: string;
  function: { name: string; arguments: Record<string, unknown> };
}

/** Ollama's message plus the fields its JS client types omit but the server understands. */
export interface ChatMessage extends Omit<Message, 'tool_calls'> {
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
}

export interface ChatRequest {
  /** The Ollama model; `ollama.model` when absent. */
  model?: string;
  messages: ChatMessage[];
  temperature: number;
  signal: AbortSignal;
  tools?: Tool[];
  /** A JSON schema for structured output. */
  format?: object;
  /** Sent only when set: Ollama refuses `think` for models without the `thinking` capability. */
  think?: boolean | 'low' | 'medium' | 'high';
  /** Called with each piece of `content` as it streams in (never thinking), in order. */
  onContent?: (delta: string) => void;
  /** The most tokens to generate for this call (an MCP server's sampling request); absent: `ollama.num_predict`'s bound. */
  numPredict?: number;
}

/** What `/api/show` says about the configured model. */
export interface ModelFacts {
  /** e.g. `completion`, `tools`, `vision`, `thinking`. */
  capabilities: string[];
  /** The trained context, `model_info["<arch>.context_length"]`; null when Ollama does not say. */
  contextLength: number | null;
}

export interface ChatReply {
  content: string;
  thinking: string;
  toolCalls: ChatToolCall[];
  doneReason: string;
  promptEvalCount: number;
  evalCount: number;
  /** Milliseconds from the request to the first chunk that carried content, thinking or a tool call (time to first token). */
  firstTokenMs?: number;
}

/** The context share the prompt budget leaves for an answer; `ollama.num_predict: 0` sends exactly that. */
export const OUTPUT_SHARE = 0.125;

/** The `num_predict` every request sends: the configured bound, or the share of the context kept for the answer. */
export function outputBound(ollama: { numCtx: number; numPredict: number }): number {
  return ollama.numPredict > 0 ? ollama.numPredict : Math.floor(ollama.numCtx * OUTPUT_SHARE);
}

/**
 * Thin typed wrapper over the `ollama` client: I/O only, no rules. Every call gets a deadline
 * (`ollama.request_timeout_ms`) and the caller's abort signal; every failure becomes one OllamaError.
 */
@Injectable()
export class OllamaGateway {
  constructor(private readonly config: AppConfig) {}

  /** Capabilities and trained context of a model (`ollama.model` unless named), from `/api/show`. */
  async model(signal: AbortSignal, name = this.config.ollama.model): Promise<ModelFacts> {
    return this.withDeadline(signal, async (client) => {
      const show = await client.show({ model: name });
      // The client types model_info as a Map, but it is the parsed JSON object.
      const info = (show.model_info ?? {}) as unknown as Record<string, unknown>;
      const key = Object.keys(info).find((name) => name.endsWith('.context_length'));
      const contextLength = key !== undefined && typeof info[key] === 'number' ? info[key] : null;
      return { capabilities: show.capabilities ?? [], contextLength };
    });
  }

  /** The server's version (`/api/version`), e.g. `0.12.10`. */
  async version(signal: AbortSignal): Promise<string> {
    return this.withDeadline(signal, async (client) => (await client.version()).version);
  }

  /** Names of the models Ollama has pulled (`/api/tags`). */
  async models(signal: AbortSignal): Promise<string[]> {
    return this.withDeadline(signal, async (client) => (await client.list()).models.map((model) => model.name));
  }

  /**
   * One streamed `/api/chat` call, accumulated (content, thinking and tool calls may arrive in any
   * chunk); token counts come from the final chunk. `num_ctx` and `keep_alive` never vary, so the
   * model is not reloaded between calls. A stream that sends nothing for `ollama.stall_timeout_ms`
   * after it started is aborted as `stalled`. `num_predict` is constant too: it bounds every answer.
   */
  async chat(request: ChatRequest): Promise<ChatReply> {
    const { numCtx, keepAlive, stallTimeoutMs, seed } = this.config.ollama;
    const model = request.model ?? this.config.ollama.model;
    const numPredict = outputBound(this.config.ollama);
    return this.withDeadline(request.signal, async (client, abort) => {
      const requested = performance.now();
      const stream = await client.chat({
        model,
        // The client rewrites `images` on the message objects it is given (bytes -> Base64 text), and
        // on the next call would treat that text as a file path to read: it gets copies, always.
        messages: request.messages.map((message) => ({ ...message })),
        stream: true,
        keep_alive: keepAlive,
        options: { num_ctx: numCtx, num_predict: request.numPredict ?? numPredict, temperature: request.temperature, ...(seed >= 0 ? { seed } : {}) },
        ...(request.tools?.length ? { tools: request.tools } : {}),
        ...(request.format ? { format: request.format } : {}),
        ...(request.think !== undefined ? { think: request.think } : {}),
      });
      const reply: ChatReply = { content: '', thinking: '', toolCalls: [], doneReason: '', promptEvalCount: 0, evalCount: 0 };
      let stall: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(stall);
        stall = setTimeout(() => abort(new OllamaError('stalled', `Ollama stopped streaming: no chunk for ${stallTimeoutMs} ms`)), stallTimeoutMs);
      };
      arm();
      try {
        for await (const chunk of stream) {
          arm();
          const content = chunk.message?.content ?? '';
          if (reply.firstTokenMs === undefined && (content !== '' || chunk.message?.thinking || chunk.message?.tool_calls?.length))
            reply.firstTokenMs = Math.round(performance.now() - requested);
          reply.content += content;
          if (content !== '') request.onContent?.(content);
          reply.thinking += chunk.message?.thinking ?? '';
          reply.toolCalls.push(...(chunk.message?.tool_calls ?? []));
          if (chunk.done) {
            reply.doneReason = chunk.done_reason ?? '';
            reply.promptEvalCount = chunk.prompt_eval_count ?? 0;
            reply.evalCount = chunk.eval_count ?? 0;
          }
        }
      } finally {
        clearTimeout(stall);
      }
      return reply;
    });
  }

  /**
   * Runs `call` with a client whose fetch carries a signal aborted by the caller or the deadline.
   * The signals are linked by hand, not with AbortSignal.any: on Node 20 a composed timeout signal can
   * be garbage-collected before it fires, leaving a request to a silent server hanging forever.
   */
  private async withDeadline<T>(callerSignal: AbortSignal, call: (client: Ollama, abort: (reason: OllamaError) => void) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timeoutMs = this.config.ollama.requestTimeoutMs;
    const timer = setTimeout(() => controller.abort(new OllamaError('timeout', `Ollama did not answer within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => controller.abort(callerSignal.reason);
    if (callerSignal.aborted) onAbort();
    else callerSignal.addEventListener('abort', onAbort, { once: true });
    const client = new Ollama({
      host: this.config.ollama.host,
      headers: this.config.ollama.headers,
      fetch: (input, init) => fetch(input, { ...init, signal: controller.signal }),
    });
    try {
      return await call(client, (reason) => controller.abort(reason));
    } catch (error) {
      throw toOllamaError(error, controller.signal, this.config.ollama);
    } finally {
      clearTimeout(timer);
      callerSignal.removeEventListener('abort', onAbort);
    }
  }
}
