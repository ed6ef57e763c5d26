/** Whether `wanted` is among Ollama's pulled models; `qwen3` names the same model as `qwen3:latest`. */
export const isModelPulled = (models: readonly string[], wanted: string) => models.some((name) => name === wanted || name === `${wanted}:latest`);
