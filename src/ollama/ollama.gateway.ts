import { Injectable } from '@nestjs/common';
import { Ollama, type Message } from 'ollama';
import { AppConfig } from '../config/app-config.js';
import { OllamaError, toOllamaError } from './ollama-error.js';

export interface ChatRequest {
  messages: Message[];
  temperature: number;
  signal: AbortSignal;
}

export interface ChatReply {
  content: string;
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

  /** One streamed `/api/chat` call, accumulated; token counts come from the final chunk. */
  async chat(request: ChatRequest): Promise<ChatReply> {
    const { model, numCtx, keepAlive } = this.config.ollama;
    return this.withDeadline(request.signal, async (client) => {
      const stream = await client.chat({
        model,
        messages: request.messages,
        stream: true,
        keep_alive: keepAlive,
        options: { num_ctx: numCtx, temperature: request.temperature },
      });
      let content = '';
      let promptEvalCount = 0;
      let evalCount = 0;
      for await (const chunk of stream) {
        content += chunk.message?.content ?? '';
        if (chunk.done) {
          promptEvalCount = chunk.prompt_eval_count ?? 0;
          evalCount = chunk.eval_count ?? 0;
        }
      }
      return { content, promptEvalCount, evalCount };
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
