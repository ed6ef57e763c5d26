import type { Tool } from 'ollama';
import { outputBound, type ChatMessage } from '../ollama/ollama.gateway.js';

/** Ollama's own estimate for an image when it fits a prompt into the context (server/prompt.go). */
export const IMAGE_TOKENS = 768;
/** Per-message template tokens (role markers, separators) of qwen3/llama3-style chat templates. */
const MESSAGE_OVERHEAD = 8;

/**
 * Token estimates of requests, so that none is sent over `num_ctx`: Ollama would silently drop its
 * oldest messages (truncate defaults to true, server/prompt.go). Text is counted at 3 characters a
 * token (code and non-English text tokenize denser than English prose at ~4) and the ratio only ever
 * grows when a reply's `prompt_eval_count` shows more tokens than estimated. prompt_eval_count alone
 * cannot be the gauge: after a KV-cache hit it counts only the newly evaluated tokens.
 */
export class ContextBudget {
  private charsPerToken = 3;

  readonly numCtx: number;
  /** The most prompt tokens a request may have: the context less the answer's bound (`num_predict`). */
  readonly limit: number;

  constructor(ollama: { numCtx: number; numPredict: number }) {
    this.numCtx = ollama.numCtx;
    this.limit = ollama.numCtx - outputBound(ollama);
  }

  estimate(messages: ChatMessage[], tools: Tool[]): number {
    let chars = tools.length > 0 ? JSON.stringify(tools).length : 0;
    let images = 0;
    for (const message of messages) {
      chars += message.content.length + (message.thinking?.length ?? 0);
      if (message.tool_calls) chars += JSON.stringify(message.tool_calls).length;
      images += message.images?.length ?? 0;
    }
    return Math.ceil(chars / this.charsPerToken) + messages.length * MESSAGE_OVERHEAD + images * IMAGE_TOKENS;
  }

  /** Learns from a reply: a prompt that took more tokens than estimated makes later estimates larger. */
  observe(estimated: number, promptEvalCount: number): void {
    if (promptEvalCount <= estimated || estimated === 0) return;
    this.charsPerToken = Math.max(1, this.charsPerToken * (estimated / promptEvalCount));
  }
}
