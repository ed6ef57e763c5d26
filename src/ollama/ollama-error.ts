import type { AgentConfig } from '../config/agent-config.js';

export type OllamaErrorKind = 'unreachable' | 'model_not_found' | 'no_tools' | 'no_thinking' | 'http' | 'timeout' | 'stalled' | 'aborted' | 'bad_response';

/** The one domain error of the gateway; `message` is a reason fit for a Task result, naming the fix. */
export class OllamaError extends Error {
  constructor(
    readonly kind: OllamaErrorKind,
    message: string,
    /** The HTTP status Ollama answered with, for kind `http`. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'OllamaError';
  }
}

/** Maps whatever fetch or the ollama client threw into an OllamaError with a clear reason. */
export function toOllamaError(error: unknown, signal: AbortSignal, ollama: AgentConfig['ollama']): OllamaError {
  if (error instanceof OllamaError) return error;
  if (signal.aborted) {
    return signal.reason instanceof OllamaError ? signal.reason : new OllamaError('aborted', 'Ollama request aborted');
  }
  const status = (error as { status_code?: number }).status_code;
  const detail = (error as Error).message ?? String(error);
  // Ollama v0.1.21+: 404 `model 'x' not found` from /api/show and /api/chat.
  if (status === 404) {
    return new OllamaError(
      'model_not_found',
      `Ollama model "${ollama.model}" was not found at ${ollama.host} (${detail}): run \`ollama pull ${ollama.model}\` or set ollama.model to a pulled model (\`ollama list\`).`,
    );
  }
  // Ollama v0.3.0+: 400 `registry.ollama.ai/library/x:latest does not support tools`.
  if (status === 400 && /does not support tools/.test(detail)) return new OllamaError('no_tools', detail, status);
  // Ollama v0.9.0+: 400 `"x" does not support thinking`.
  if (status === 400 && /does not support thinking/.test(detail)) {
    return new OllamaError('no_thinking', `${detail}: set ollama.think to auto or false, or use a thinking model (qwen3, deepseek-r1, gpt-oss).`, status);
  }
  if (typeof status === 'number') return new OllamaError('http', `Ollama returned HTTP ${status}: ${detail}`, status);
  if (error instanceof TypeError || /ECONNREFUSED|fetch failed|ENOTFOUND|socket/i.test(detail)) {
    return new OllamaError('unreachable', `Ollama is not reachable at ${ollama.host}: ${causeOf(error)}. Start it (\`ollama serve\`) or fix ollama.host.`);
  }
  return new OllamaError('bad_response', `Unexpected response from Ollama: ${detail}`);
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
