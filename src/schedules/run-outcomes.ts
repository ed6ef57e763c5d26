import type { TaskQueueService } from '../queue/task-queue.service.js';

/** How much of a run's Task result a runs page gets (it shows the first non-blank line of it, at most 300 characters). */
const RUN_RESULT_CHARS = 400;

/** What a schedule's or trigger's run shows of its Task. */
export interface RunOutcome {
  taskStatus: string | null;
  /** The start of the Task's result, for its first line. */
  taskResult: string | null;
}

/**
 * Schedule or trigger runs with their Task's status and the start of its result, which the queue gives
 * (it owns `tasks`): one call for a page of runs.
 */
export async function withOutcomes<Run extends { taskId: string | null }>(queue: TaskQueueService, runs: Run[]): Promise<(Run & RunOutcome)[]> {
  const outcomes = await queue.outcomes(
    runs.flatMap((run) => (run.taskId === null ? [] : [run.taskId])),
    RUN_RESULT_CHARS,
  );
  return runs.map((run) => {
    const outcome = run.taskId === null ? undefined : outcomes.get(run.taskId);
    return { ...run, taskStatus: outcome?.status ?? null, taskResult: outcome?.result ?? null };
  });
}
