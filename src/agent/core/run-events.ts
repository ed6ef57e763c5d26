import type { FileChange } from '../../workspace/workspace-files.js';
import type { StepRecord } from '../trace.repository.js';

/**
 * The agent core's seam 3 of 3 (ADR 0009): what a run emits as it goes. The trace, the Task row's
 * progress, streaming edges (Chat deltas, A2A artifact updates, MCP task notifications), webhooks and
 * workspace checkpoints subscribe here instead of being called back through the loop.
 *
 * Delivery is in order, per Task. `emit` awaits every in-process subscriber (so the trace row exists
 * before the next model call and a lost lease stops the run), and a subscriber that throws fails the run
 * only if it is marked `required` (the trace, the progress row); the others are logged and dropped.
 */
export type RunEvent =
  /** The active status the run is in, and the step a person sees (`current_task`). */
  | { type: 'status'; taskId: string; status: 'planning' | 'running'; currentTask: string }
  /** Subtask progress: `completed_tasks: x/y` and the critical path. */
  | { type: 'progress'; taskId: string; completedSubtasks: number; totalSubtasks: number; criticalPathTokens?: number; currentTask?: string }
  /** Running token totals after each model call. */
  | { type: 'tokens'; taskId: string; inputTokens: number; outputTokens: number }
  /** One trace step (model call, tool call, file op, command, mcp_tool, plan), as stored in `task_steps`. */
  | { type: 'step'; taskId: string; step: StepRecord }
  /**
   * Text of the final answer as the model writes it (never thinking). `offset` is the length of the
   * answer before this delta: a client appends `text` at `offset`; a retried or continued answer that
   * restarts sends `offset` smaller than what the client has, which means "drop what follows offset".
   */
  | {
      type: 'answer_delta';
      taskId: string;
      offset: number;
      text: string;
      /**
       * Extension (issue 23): the delta's place in the Task's answer, 1, 2, ...; TaskEvents stamps it
       * when the emitter does not. A follower that sees a gap (a dropped notification) catches up from the
       * stored draft, which records the last seq it holds.
       */
      seq?: number;
    }
  /** A workspace file the run created or changed (a file tool or a command). */
  | { type: 'file_change'; taskId: string; change: FileChange }
  /** The run stopped for a person (approval or question); emitted once the pause and its request are stored. */
  | { type: 'paused'; taskId: string; kind: 'approval' | 'question'; id: string }
  /** Extension (issue 35): the person's corrections reached the model; `count`: how many the run took in all. */
  | { type: 'steered'; taskId: string; count: number }
  /** The run ended (the Task's row has its final status and result by then). */
  | { type: 'ended'; taskId: string; status: 'completed' | 'failed' | 'cancelled'; result: string }
  /**
   * Extension (issue 23): a Task was queued, by whom (with the groups the accepting surface saw, which
   * the Task row does not keep). Published by the queue, not by a run; webhooks pick their targets from it.
   */
  | { type: 'accepted'; taskId: string; sessionId: string; owner: string; groups: string[] };

export type RunEventListener = (event: RunEvent) => void | Promise<void>;

/** The emitting side a run and its tool sources see. */
export interface RunEvents {
  emit(event: RunEvent): Promise<void>;
}
