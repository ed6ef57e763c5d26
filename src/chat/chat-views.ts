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
export function completionOf(task: WithFiles, model: string, asking: InputRequest | null = null, followUp = false) {
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
    ...followUpOf(followUp),
    ...pausedOf(asking),
  };
}

type Delta = {
  role?: 'assistant';
  content?: string;
  agent_answer_offset?: number;
  agent?: ReturnType<typeof agentOf> & { agent_state?: 'steered' | 'kept' | 'follow_up' };
  agent_steps?: AgentStep[];
};

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

/**
 * Issue 35: a correction (`agent_steer`) the running Task took: answered at once, as a completion with no
 * content of its own and `agent_state: "steered"`; the Task's answer comes on its own request's response.
 * `kept`: the session's Task waits for a person; the correction answers nothing and reaches the model
 * with the answer (`agent_state: "kept"`, the paused Task's own status).
 */
export const steeredOf = (task: TaskReadModel, model: string, state: 'steered' | 'kept') => ({
  id: completionId(task),
  object: 'chat.completion',
  created: created(task),
  model,
  choices: [{ index: 0, message: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  ...steeredAgent(task, state),
});

/** The same, streamed: the agent object, then the finish. */
export const steeredChunks = (task: TaskReadModel, model: string, state: 'steered' | 'kept') => [
  chunk(task, model, { role: 'assistant', content: '', agent: steeredAgent(task, state) }, null),
  { ...chunk(task, model, {}, 'stop'), usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, ...steeredAgent(task, state) },
];

const steeredAgent = (task: TaskReadModel, state: 'steered' | 'kept') => ({
  task_id: task.id,
  session_id: task.sessionId,
  status: state === 'steered' ? ('running' as const) : task.status,
  agent_state: state,
});

/**
 * Issue 35: a correction that came when its Task no longer ran became the session's next Task:
 * `agent_state: "follow_up"` says so (a paused Task's `input_required` says more, and wins).
 */
export const followUpOf = (followUp: boolean) => (followUp ? { agent_state: 'follow_up' as const } : {});

export const modelsList = (modelIds: string[], since: number) => ({
  object: 'list',
  data: modelIds.map((id) => ({ id, object: 'model', created: since, owned_by: 'ollama-agent-mcp' })),
});
