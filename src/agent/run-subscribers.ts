import type { TaskProgress } from './agent-runner.js';
import type { RunEventListener } from './core/run-events.js';
import type { TraceRepository, TraceScope } from './trace.repository.js';

/**
 * The trace: every `step` becomes a `task_steps` row before the run goes on, and a step that changed a
 * file also its `task_file_changes` row, in the same transaction (the file change is recorded when it happens).
 */
export const traceWriter =
  (trace: TraceRepository, scope: TraceScope): RunEventListener =>
  async (event) => {
    if (event.type === 'step') await trace.append(event.step, scope);
  };

/** The Task row: status, progress and token events become the queue's progress report. */
export const progressReporter =
  (report: (progress: TaskProgress) => Promise<void>): RunEventListener =>
  async (event) => {
    switch (event.type) {
      case 'status':
        return report({ status: event.status, currentTask: event.currentTask });
      case 'progress': {
        const { completedSubtasks, totalSubtasks, criticalPathTokens, currentTask } = event;
        return report({
          completedSubtasks,
          totalSubtasks,
          ...(criticalPathTokens !== undefined ? { criticalPathTokens } : {}),
          ...(currentTask !== undefined ? { currentTask } : {}),
        });
      }
      case 'tokens':
        return report({ inputTokens: event.inputTokens, outputTokens: event.outputTokens });
    }
  };
