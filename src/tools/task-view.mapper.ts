import type { TaskReadModel } from '../queue/task-read-model.js';
import type { TaskView } from './status-text.js';

/** The read model as agent_status and the Tasks extension report it (the spec §3.4 fields). */
export function mapTaskView(task: TaskReadModel): TaskView {
  return {
    taskId: task.id,
    sessionId: task.sessionId,
    status: task.status,
    completedSubtasks: task.progress.completedSubtasks,
    totalSubtasks: task.progress.totalSubtasks,
    currentTask: task.progress.currentTask,
    inputTokens: task.usage.input,
    outputTokens: task.usage.output,
    criticalPathTokens: task.progress.criticalPathTokens,
    result: task.result,
    stoppedBy: task.stoppedBy,
    steerCount: task.steerCount,
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
  };
}
