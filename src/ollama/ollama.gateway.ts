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
  messages: ChatMessage[];
  temperature: number;
  signal: AbortSignal;
  tools?: Tool[];
  /** A JSON schema for structured output. */
  format?: object;
}

export interface ChatReply {
  content: string;
  thinking: string;
  toolCalls: ChatToolCall[];
  doneReason: string;
  promptEvalCount: number;
  evalCount: number;
}

/**
 * Thin typed wrapper over the `ollama` client: I/O only, no rules. Every call gets a deadline
 * (`ollama.request_timeout_ms`) and the caller's abort signal; every failure becomes one OllamaError.
 */
@Injectable()
export class OllamaGateway {
  constructor(private readonly config: AppConfig) {}

  /** Model capabilities from `/api/show` (e.g. `completion`, `tools`, `vision`). */
  async capabilities(signal: AbortSignal): Promise<string[]> {
    return this.withDeadline(signal, async (client) => {
      const show = await client.show({ model: this.config.ollama.model });
      return show.capabilities ?? [];
    });
  }

  /** Names of the models Ollama has pulled (`/api/tags`). */
  async models(signal: AbortSignal): Promise<string[]> {
    return this.withDeadline(signal, async (client) => (await client.list()).models.map((model) => model.name));
  }

  /**
   * One streamed `/api/chat` call, accumulated (content, thinking and tool calls may arrive in any
   * chunk); token counts come from the final chunk. `num_ctx` and `keep_alive` never vary, so the
   * model is not reloaded between calls.
   */
  async chat(request: ChatRequest): Promise<ChatReply> {
    const { model, numCtx, keepAlive } = this.config.ollama;
    return this.withDeadline(request.signal, async (client) => {
      const stream = await client.chat({
        model,
        // The client rewrites `images` on the message objects it is given (bytes -> Base64 text), and
        // on the next call would treat that text as a file path to read: it gets copies, always.
        messages: request.messages.map((message) => ({ ...message })) as Message[],
        stream: true,
        keep_alive: keepAlive,
        options: { num_ctx: numCtx, temperature: request.temperature },
        ...(request.tools?.length ? { tools: request.tools } : {}),
        ...(request.format ? { format: request.format } : {}),
      });
      const reply: ChatReply = { content: '', thinking: '', toolCalls: [], doneReason: '', promptEvalCount: 0, evalCount: 0 };
      for await (const chunk of stream) {
        reply.content += chunk.message?.content ?? '';
        reply.thinking += chunk.message?.thinking ?? '';
        reply.toolCalls.push(...((chunk.message?.tool_calls as ChatToolCall[] | undefined) ?? []));
        if (chunk.done) {
          reply.doneReason = chunk.done_reason ?? '';
          reply.promptEvalCount = chunk.prompt_eval_count ?? 0;
          reply.evalCount = chunk.eval_count ?? 0;
        }
      }
      return reply;
    });
  }

  /**
   * Runs `call` with a client whose fetch carries a signal aborted by the caller or the deadline.
   * The signals are linked by hand, not with AbortSignal.any: on Node 20 a composed timeout signal can
   * be garbage-collected before it fires, leaving a request to a silent server hanging forever.
   */
  private async withDeadline<T>(callerSignal: AbortSignal, call: (client: Ollama) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const timeoutMs = this.config.ollama.requestTimeoutMs;
    const timer = setTimeout(() => controller.abort(new OllamaError('timeout', `Ollama did not answer within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => controller.abort(callerSignal.reason);
    if (callerSignal.aborted) onAbort();
    else callerSignal.addEventListener('abort', onAbort, { once: true });
    const client = new Ollama({
      host: this.config.ollama.host,
      fetch: (input, init) => fetch(input, { ...init, signal: controller.signal }),
    });
    try {
      return await call(client);
    } catch (error) {
      throw toOllamaError(error, controller.signal, this.config.ollama);
    } finally {
      clearTimeout(timer);
      callerSignal.removeEventListener('abort', onAbort);
    }
  }
}
