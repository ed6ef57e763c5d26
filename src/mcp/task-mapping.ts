import type { AgentConfig } from '../config/agent-config.js';
import { formatStatusText, statusMessages, type Locale, type TaskView } from '../tools/status-text.js';

type McpTaskStatus = 'working' | 'completed' | 'cancelled';

/** Task fields shared by CreateTaskResult and tasks/get (Tasks extension §Tasks). */
function taskFields(view: TaskView, tasks: AgentConfig['mcp']['tasks'], locale: Locale) {
  return {
    taskId: view.taskId,
    status: mcpStatus(view),
    statusMessage: statusMessage(view, locale),
    createdAt: view.createdAt,
    lastUpdatedAt: view.updatedAt,
    ttlMs: tasks.ttlMs,
    pollIntervalMs: tasks.pollIntervalMs,
  };
}

/** queued/planning/running are `working`; a failed agent Task is a completed tool call with isError. */
function mcpStatus(view: TaskView): McpTaskStatus {
  switch (view.status) {
    case 'queued':
    case 'planning':
    case 'running':
      return 'working';
    case 'completed':
    case 'failed':
      return 'completed';
    case 'cancelled':
      return 'cancelled';
  }
}

function statusMessage(view: TaskView, locale: Locale): string {
  const progress = `${view.status} ${view.completedSubtasks}/${view.totalSubtasks}`;
  const step = view.currentTask ? `: ${view.currentTask}` : '';
  return `${progress}${step} - ${statusMessages(locale)[view.status]}`;
}

export function createTaskResult(view: TaskView, tasks: AgentConfig['mcp']['tasks'], locale: Locale = 'ja') {
  return { resultType: 'task' as const, ...taskFields(view, tasks, locale) };
}

/**
 * tasks/get: the final CallToolResult (the agent_status text) rides along once the Task is done; an
 * active Task that waits for an approval is `input_required` with its form elicitation.
 */
export function getTaskResult(view: TaskView, tasks: AgentConfig['mcp']['tasks'], inputRequests: Record<string, unknown> | null = null, locale: Locale = 'ja') {
  const fields = taskFields(view, tasks, locale);
  if (inputRequests && fields.status === 'working') return { resultType: 'complete' as const, ...fields, status: 'input_required' as const, inputRequests };
  if (fields.status !== 'completed') return { resultType: 'complete' as const, ...fields };
  return {
    resultType: 'complete' as const,
    ...fields,
    result: {
      resultType: 'complete' as const,
      content: [{ type: 'text' as const, text: formatStatusText(view, locale) }],
      isError: view.status === 'failed',
    },
  };
}
