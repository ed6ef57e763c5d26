import type { RunEvent } from '../agent/core/run-events.js';
import type { ToolCallContext } from '../agent/core/tool-source.js';

type StepRecord = Extract<RunEvent, { type: 'step' }>['step'];

/** One trace step of a call, in the Task and subtask the call runs in (a server's tool call, a `find_tools` search, a skill loaded). */
export function emitCallStep(context: ToolCallContext, step: Omit<StepRecord, 'taskId' | 'subtask'>): Promise<void> {
  return context.events.emit({ type: 'step', taskId: context.taskId, step: { taskId: context.taskId, subtask: context.subtask, ...step } });
}
