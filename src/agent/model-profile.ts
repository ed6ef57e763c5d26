import type { AgentConfig } from '../config/agent-config.js';
import type { ChatRequest, ModelFacts } from '../ollama/ollama.gateway.js';
import { MINIMUM_VERSION, TOOL_MODELS, tooOld } from '../ollama/ollama-requirements.js';
import { AgentFailure } from './agent-runner.js';

/** How one Task talks to the model; fixed for the Task, so every request has the same shape. */
export interface ModelProfile {
  facts: ModelFacts;
  /** `think` as sent; undefined: not sent at all. */
  think: ChatRequest['think'];
  /** `native`: tools in the request; `text`: tools described in the system prompt, calls parsed from text. */
  toolMode: 'native' | 'text';
  /** Notes for the trace, e.g. a `think` setting that was not sent. */
  notes: string[];
}

/**
 * The profile for the Task's model, or an AgentFailure naming the fix: images for a model without
 * vision, a model without tools when the Task needs tools and text tools are off, an Ollama too old for
 * what would be sent.
 */
export function resolveProfile(facts: ModelFacts, version: string, config: AgentConfig, task: { model: string; imageCount: number; tools: boolean }): ModelProfile {
  const { think: configured } = config.ollama;
  const { model, imageCount } = task;
  const capabilities = facts.capabilities;
  if (imageCount > 0 && !capabilities.includes('vision')) {
    throw new AgentFailure(
      `The model "${model}" does not support image input (capabilities: ${capabilities.join(', ') || 'none'}). Use a vision model such as qwen2.5vl:7b, gemma3 or mistral-small3.1, or send the request without images.`,
    );
  }
  const notes: string[] = [];
  let toolMode: ModelProfile['toolMode'] = 'native';
  if (task.tools && !capabilities.includes('tools')) {
    if (!config.agent.textTools) throw noToolsFailure(model, `capabilities: ${capabilities.join(', ') || 'none'}`);
    toolMode = 'text';
    notes.push('the model lacks the tools capability: tools are offered through the text tool protocol');
  }
  const thinking = capabilities.includes('thinking');
  const think = thinking ? thinkValue(configured) : undefined;
  if (!thinking && configured !== 'auto' && configured !== 'false') {
    notes.push(`ollama.think is ${configured} but the model lacks the thinking capability: think is not sent`);
  }
  requireVersion(version, MINIMUM_VERSION.streamedToolCalls, 'streamed tool calls', config);
  if (think !== undefined) requireVersion(version, MINIMUM_VERSION.think, `thinking (ollama.think: ${configured})`, config);
  return { facts, think, toolMode, notes };
}

/** The Task's failure when the model cannot take tools and text tools are off. */
export function noToolsFailure(model: string, why: string): AgentFailure {
  return new AgentFailure(
    `The model "${model}" cannot use tools (${why}). Use a model with the tools capability, e.g. ${TOOL_MODELS} (\`ollama show <model>\` lists capabilities), or set agent.text_tools: true to let it call tools through its text.`,
  );
}

function thinkValue(configured: AgentConfig['ollama']['think']): ChatRequest['think'] {
  switch (configured) {
    case 'auto':
    case 'true':
      return true;
    case 'false':
      return false;
    default:
      return configured;
  }
}

function requireVersion(version: string, minimum: string, feature: string, config: AgentConfig): void {
  const problem = tooOld(version, minimum, feature, config.ollama.host);
  if (problem) throw new AgentFailure(problem);
}
