import type { AgentConfig } from '../config/agent-config.js';

/** The tier of `ollama.model`, and of every MCP Task. */
export const DEFAULT_TIER = 'default';

/** Every tier and its Ollama model, the default tier first (`ollama.model`, then `ollama.models`). */
export function tierModels(ollama: Pick<AgentConfig['ollama'], 'model' | 'models'>): Map<string, string> {
  return new Map([[DEFAULT_TIER, ollama.model], ...ollama.models]);
}
