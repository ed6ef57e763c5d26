/** Models known to call tools well through Ollama (reference ollama.md §4.10), named when a model cannot. */
export const TOOL_MODELS = 'qwen3:8b, qwen3-coder:30b, gpt-oss:20b, mistral-small3.1, devstral';

/**
 * Oldest Ollama for each feature the agent uses: tool calls in a streamed /api/chat came with v0.8.0,
 * the `think` field with v0.9.0 (api/types.go history).
 */
export const MINIMUM_VERSION = { streamedToolCalls: '0.8.0', think: '0.9.0' } as const;

/** A version that lacks `feature`: the reason, naming the fix; null when it is new enough. */
export function tooOld(version: string, minimum: string, feature: string, host: string): string | null {
  // Builds from source report 0.0.0: their features are unknown, so they are not refused.
  if (version === '0.0.0' || compareVersions(version, minimum) >= 0) return null;
  return `Ollama ${version} at ${host} is too old for ${feature}, which needs ${minimum} or later: upgrade Ollama (https://ollama.com/download).`;
}

/** Compares dotted numeric versions (`0.12.10` > `0.9.0`); a pre-release suffix is ignored. */
function compareVersions(a: string, b: string): number {
  const parts = (version: string) =>
    version
      .replace(/^v/, '')
      .split(/[-+]/)[0]
      .split('.')
      .map((part) => Number.parseInt(part, 10) || 0);
  const [left, right] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** The warning when `num_ctx` exceeds what the model was trained for; null when it does not. */
export function contextWarning(numCtx: number, contextLength: number | null): string | null {
  if (contextLength === null || numCtx <= contextLength) return null;
  return `ollama.num_ctx ${numCtx} exceeds the model's trained context of ${contextLength} tokens: answers degrade past it; set ollama.num_ctx to ${contextLength} or less.`;
}
