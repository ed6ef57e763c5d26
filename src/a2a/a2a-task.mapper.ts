import { Role, TaskState, type Artifact, type Message, type Part, type Task, type TaskStatus as A2aTaskStatus } from '@a2a-js/sdk';
import type { AgentStep } from '../conversation/agent-steps.js';
import type { InputRequest } from '../conversation/input-request.js';
import type { TaskStatus } from '../queue/task-status.js';
import type { TaskReadModel, WithFiles } from '../queue/task-read-model.js';
import { mimeTypeOf, sessionFileUri } from '../workspace/session-file-uri.js';
import type { A2aView } from './a2a-contexts.js';

/** The agent Task states as A2A 1.0 task states. */
export const A2A_STATE: Record<TaskStatus, TaskState> = {
  queued: TaskState.TASK_STATE_SUBMITTED,
  planning: TaskState.TASK_STATE_WORKING,
  running: TaskState.TASK_STATE_WORKING,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
};

const textPart = (text: string): Part => ({ content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: {} });

function agentMessage(task: A2aView, id: string, parts: Part[]): Message {
  return { messageId: id, contextId: task.contextId, taskId: task.id, role: Role.ROLE_AGENT, parts, metadata: {}, extensions: [], referenceTaskIds: [] };
}

/** The answer artifact with `text` (all of it, or the chunk an update appends). */
export const answerArtifact = (task: TaskReadModel, text: string): Artifact => ({
  artifactId: `${task.id}/answer`,
  name: 'answer',
  description: 'The agent’s answer',
  parts: [textPart(text)],
  metadata: {},
  extensions: [],
});

/** The answer artifact (text), and the deliverables artifact (file parts by session-file URI, readable as MCP resources) when the Task changed files. */
export function artifactsOf(task: WithFiles): Artifact[] {
  if (task.status !== 'completed') return [];
  const answer = answerArtifact(task, task.result ?? '');
  if (task.files.length === 0) return [answer];
  const files: Artifact = {
    artifactId: `${task.id}/deliverables`,
    name: 'deliverables',
    description: 'Files the Task created or changed in its session',
    parts: task.files.map(({ path }) => ({ content: { $case: 'url', value: sessionFileUri(task.sessionId, path) }, mediaType: mimeTypeOf(path), filename: path, metadata: {} })),
    metadata: {},
    extensions: [],
  };
  return [answer, files];
}

/** Issue 35: the working Task took the message as a correction (at its next step boundary). */
export function steeredMessage(task: A2aView): { message: Message; metadata: Record<string, unknown> } {
  const text = 'The correction was given to the running task; the model reads it at its next step.';
  return { message: agentMessage(task, `${task.id}/steered/${task.steerCount}`, [textPart(text)]), metadata: { agentState: 'steered', steerCount: task.steerCount } };
}

/** Issue 35: the Task had passed its last model call: the message became the context's next Task. */
export function followUpMessage(task: A2aView, followUpTaskId: string): { message: Message; metadata: Record<string, unknown> } {
  const text = `The task had passed its last model call; the message was queued as the follow-up task ${followUpTaskId}.`;
  return { message: agentMessage(task, `${task.id}/follow-up/${followUpTaskId}`, [textPart(text)]), metadata: { agentState: 'follow_up', followUpTaskId } };
}

/** Progress as a status update message: one line per step, the steps themselves in its metadata. */
export function progressMessage(task: A2aView, steps: AgentStep[]): Message {
  const lines = steps.map((step) => `${step.type}: ${step.name}${step.exit_code !== undefined ? ` (exit code ${step.exit_code})` : ''} [${step.status}]`);
  const { currentTask } = task.progress;
  const text = lines.length > 0 ? lines.join('\n') : `${task.status}${currentTask ? `: ${currentTask}` : ''}`;
  return { ...agentMessage(task, `${task.id}/progress/${task.updatedAt}/${steps.length}`, [textPart(text)]), metadata: { agent_steps: steps } };
}

/** Why a failed or cancelled Task ended, as its status message. */
const endMessage = (task: A2aView): Message | undefined => (task.error === null ? undefined : agentMessage(task, `${task.id}/end`, [textPart(task.error)]));

/** A paused Task's status message: the question or action with its numbered options, the request itself in metadata. */
const inputMessage = (task: A2aView, asking: InputRequest): Message => {
  const options = asking.kind === 'question' ? '' : `\n\n${asking.options.map((option, index) => `${index + 1}. ${option}`).join('\n')}`;
  const hint = `\n\n(Answer with a new message in the same contextId (${task.contextId}): an option's number or text; any other text becomes the new instruction.)`;
  return { ...agentMessage(task, `${task.id}/input/${asking.approval_id}`, [textPart(`${asking.message}${options}${hint}`)]), metadata: { input_request: asking } };
};

/** The A2A status: `input-required` with the question while the Task waits for a person, else the Task's own. */
export function a2aStatusOf(task: A2aView, asking: InputRequest | null = null): A2aTaskStatus {
  if (asking) return { state: TaskState.TASK_STATE_INPUT_REQUIRED, message: inputMessage(task, asking), timestamp: task.updatedAt };
  return { state: A2A_STATE[task.status], message: endMessage(task), timestamp: task.updatedAt };
}

/**
 * An agent Task as an A2A Task: id = Task id, contextId = its conversation's (A2aView), the request as the one history
 * message, the answer and deliverables as artifacts, progress and token usage in metadata. `asking`:
 * what it waits for when it paused for a person (ConversationService.asking).
 */
export function a2aTaskOf(task: WithFiles<A2aView>, asking: InputRequest | null = null): Task {
  const request: Message = {
    messageId: `${task.id}/request`,
    contextId: task.contextId,
    taskId: task.id,
    role: Role.ROLE_USER,
    parts: [textPart(task.request)],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
  return {
    id: task.id,
    contextId: task.contextId,
    status: a2aStatusOf(task, asking),
    artifacts: artifactsOf(task),
    history: [request],
    metadata: a2aMetadataOf(task),
  };
}

/**
 * Progress and token usage, as an A2A Task's metadata and a terminal status update's, with the session
 * behind the contextId (the id MCP and the Chat API continue it by, when the contextId is a name).
 */
export const a2aMetadataOf = (task: TaskReadModel) => ({
  session_id: task.sessionId,
  status: task.status,
  completed_tasks: task.progress.completedSubtasks,
  total_tasks: task.progress.totalSubtasks,
  current_task: task.progress.currentTask,
  token_usage: { ...task.usage },
  // Issue 39: the Task's trace, for its owner to find it in their tracing backend.
  ...(task.traceId ? { agent_trace_id: task.traceId } : {}),
});
