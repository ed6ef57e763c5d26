import type { TaskStepEntity } from '../agent/task-step.entity.js';
import type { TaskReadModel } from '../queue/task-read-model.js';

/**
 * One execution step as the Chat API (`delta.agent_steps`) and A2A (status update metadata) show it:
 * the trace row without its free-form detail, plus the facts a client displays (a command's exit
 * code, a file change's path). `subtask` steps come from the Task row: the agent starts a subtask by
 * naming it as the current task.
 */
export interface AgentStep {
  type: TaskStepEntity['kind'] | 'subtask';
  name: string;
  subtask: string;
  status: string;
  at: string;
  duration_ms?: number;
  input_tokens?: number;
  output_tokens?: number;
  exit_code?: number | null;
  path?: string;
  bytes?: number;
  created?: boolean;
  /** An `mcp_tool` step's server and its own name for the tool. */
  server?: string;
  tool?: string;
  completed_tasks?: number;
  total_tasks?: number;
}

export function mapTraceStep(step: TaskStepEntity): AgentStep {
  const detail = JSON.parse(step.detail) as Record<string, unknown>;
  return {
    type: step.kind,
    name: step.name,
    subtask: step.subtask,
    status: step.outcome,
    at: step.startedAt,
    duration_ms: step.durationMs,
    ...(step.kind === 'model_call' ? { input_tokens: step.inputTokens, output_tokens: step.outputTokens } : {}),
    ...(step.kind === 'command' ? { exit_code: typeof detail.exitCode === 'number' ? detail.exitCode : null } : {}),
    // An undo's steps restore a path and carry no size: `bytes` only where the step measured one.
    ...(step.kind === 'file_op' ? { path: String(detail.path), ...(typeof detail.bytes === 'number' ? { bytes: detail.bytes } : {}), created: detail.created === true } : {}),
    ...(step.kind === 'mcp_tool' ? { server: String(detail.server), tool: String(detail.tool) } : {}),
  };
}

/** The subtask the Task is on, when it names one. */
export function subtaskStep(task: TaskReadModel): AgentStep | null {
  const { currentTask, completedSubtasks, totalSubtasks } = task.progress;
  if (currentTask === '') return null;
  return {
    type: 'subtask',
    name: currentTask,
    subtask: currentTask,
    status: task.status,
    at: task.updatedAt,
    completed_tasks: completedSubtasks,
    total_tasks: totalSubtasks,
  };
}
