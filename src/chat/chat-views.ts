import type { AgentStep } from '../conversation/agent-steps.js';
import type { InputRequest } from '../conversation/input-request.js';
import type { TaskEntity } from '../queue/task.entity.js';
import { sessionFileUri } from '../workspace/session-file-uri.js';

/** OpenAI's error body: every Chat API error, whatever its status. */
export function openAiError(message: string, type: string, param: string | null = null, code: string | null = null) {
  return { error: { message, type, param, code } };
}

const created = (task: TaskEntity) => Math.floor(Date.parse(task.createdAt) / 1000);
const completionId = (task: TaskEntity) => `chatcmpl-${task.id}`;

/** `stop` for a completed Task; a failed or cancelled one ends with `error` and its reason as the content. */
const finishReason = (task: TaskEntity) => (task.status === 'completed' ? 'stop' : 'error');

const usageOf = (task: TaskEntity) => ({
  prompt_tokens: task.inputTokens,
  completion_tokens: task.outputTokens,
  total_tokens: task.inputTokens + task.outputTokens,
});

/** The extension object on the first and last chunk, and the fields of a non-streamed completion. */
export const agentOf = (task: TaskEntity) => ({ task_id: task.id, session_id: task.sessionId, status: task.status });

/**
 * A Task paused for a person: `agent_state: "input_required"` and what it asks (`agent_input`: the
 * message and the options); `finish_reason` stays `stop`, and the session's next message answers it.
 */
const pausedOf = (asking: InputRequest | null) => (asking ? { agent_state: 'input_required' as const, agent_input: asking } : {});

/** A terminal Task as a `chat.completion`, with the agent's extension fields beside OpenAI's (deliverables as session-file URIs). */
export function completionOf(task: TaskEntity, model: string, deliverables: string[], asking: InputRequest | null = null) {
  return {
    id: completionId(task),
    object: 'chat.completion',
    created: created(task),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: task.result ?? '', refusal: null }, logprobs: null, finish_reason: finishReason(task) }],
    usage: usageOf(task),
    ...agentOf(task),
    deliverables: deliverables.map((path) => sessionFileUri(task.sessionId, path)),
    ...pausedOf(asking),
  };
}

type Delta = { role?: 'assistant'; content?: string; agent_answer_offset?: number; agent?: ReturnType<typeof agentOf>; agent_steps?: AgentStep[] };

/** One `chat.completion.chunk`; `last` carries the finish reason, usage and deliverables (session-file URIs, readable as MCP resources). */
export function chunkOf(task: TaskEntity, model: string, delta: Delta, last?: { deliverables: string[]; asking?: InputRequest | null }) {
  return {
    id: completionId(task),
    object: 'chat.completion.chunk',
    created: created(task),
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: last ? finishReason(task) : null }],
    ...(last
      ? { usage: usageOf(task), ...agentOf(task), deliverables: last.deliverables.map((path) => sessionFileUri(task.sessionId, path)), ...pausedOf(last.asking ?? null) }
      : {}),
  };
}

export const modelsList = (modelIds: string[], since: number) => ({
  object: 'list',
  data: modelIds.map((id) => ({ id, object: 'model', created: since, owned_by: 'ollama-agent-mcp' })),
});
