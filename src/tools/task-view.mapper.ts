import type { TaskEntity } from '../queue/task.entity.js';
import type { TaskView } from './status-text.js';

export function mapTaskView(task: TaskEntity): TaskView {
  return {
    taskId: task.id,
    sessionId: task.sessionId,
    status: task.status,
    completedSubtasks: task.completedSubtasks,
    totalSubtasks: task.totalSubtasks,
    currentTask: task.currentTask,
    inputTokens: task.inputTokens,
    outputTokens: task.outputTokens,
    criticalPathTokens: task.criticalPathTokens,
    result: task.result,
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
  };
}
