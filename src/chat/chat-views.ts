import type { AgentStep } from '../conversation/agent-steps.js';
import type { InputRequest } from '../conversation/input-request.js';
import type { TaskReadModel, WithFiles } from '../queue/task-read-model.js';
import { sessionFileUri } from '../workspace/session-file-uri.js';

/** OpenAI's error body: every Chat API error, whatever its status. */
export function openAiError(message: string, type: string, param: string | null = null, code: string | null = null) {
  return { error: { message, type, param, code } };
}

const created = (task: TaskReadModel) => Math.floor(Date.parse(task.createdAt) / 1000);
const completionId = (task: TaskReadModel) => `chatcmpl-${task.id}`;

/** `stop` for a completed Task; a failed or cancelled one ends with `error` and its reason as the content. */
const finishReason = (task: TaskReadModel) => (task.status === 'completed' ? 'stop' : 'error');

const usageOf = (task: TaskReadModel) => ({
  prompt_tokens: task.usage.input,
  completion_tokens: task.usage.output,
  total_tokens: task.usage.total,
});

/** The extension object on the first and last chunk, and the fields of a non-streamed completion. */
export const agentOf = (task: TaskReadModel) => ({ task_id: task.id, session_id: task.sessionId, status: task.status });

/** Issue 39: the Task's trace id (`agent_trace_id`) on a completion and a stream's last chunk, when it has one. */
const traceOf = (task: TaskReadModel) => (task.traceId ? { agent_trace_id: task.traceId } : {});

/**
 * A Task paused for a person: `agent_state: "input_required"` and what it asks (`agent_input`: the
 * message and the options); `finish_reason` stays `stop`, and the session's next message answers it.
 */
const pausedOf = (asking: InputRequest | null) => (asking ? { agent_state: 'input_required' as const, agent_input: asking } : {});

/** The Task's files as session-file URIs (readable as MCP resources). */
const deliverablesOf = (task: WithFiles) => task.files.map((file) => sessionFileUri(task.sessionId, file.path));

/** A terminal Task as a `chat.completion`, with the agent's extension fields beside OpenAI's (its files as session-file URIs: `deliverables`). */
export function completionOf(task: WithFiles, model: string, asking: InputRequest | null = null) {
  return {
    id: completionId(task),
    object: 'chat.completion',
    created: created(task),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: task.result ?? '', refusal: null }, logprobs: null, finish_reason: finishReason(task) }],
    usage: usageOf(task),
    ...agentOf(task),
    ...traceOf(task),
    deliverables: deliverablesOf(task),
    ...pausedOf(asking),
  };
}

type Delta = { role?: 'assistant'; content?: string; agent_answer_offset?: number; agent?: ReturnType<typeof agentOf>; agent_steps?: AgentStep[] };

const chunk = (task: TaskReadModel, model: string, delta: Delta, finish: 'stop' | 'error' | null) => ({
  id: completionId(task),
  object: 'chat.completion.chunk',
  created: created(task),
  model,
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});

/** One `chat.completion.chunk` while the Task runs. */
export const chunkOf = (task: TaskReadModel, model: string, delta: Delta) => chunk(task, model, delta, null);

/** The last chunk: the finish reason, usage and deliverables of the ended Task, and what it asks when it paused. */
export const lastChunkOf = (task: WithFiles, model: string, asking: InputRequest | null) => ({
  ...chunk(task, model, {}, finishReason(task)),
  usage: usageOf(task),
  ...agentOf(task),
  ...traceOf(task),
  deliverables: deliverablesOf(task),
  ...pausedOf(asking),
});

export const modelsList = (modelIds: string[], since: number) => ({
  object: 'list',
  data: modelIds.map((id) => ({ id, object: 'model', created: since, owned_by: 'ollama-agent-mcp' })),
});
