import type { Tool } from 'ollama';
import { nowIso } from '../common/clock.js';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { OfferedTool, ToolCallContext, ToolResult, ToolSource } from './core/tool-source.js';
import { readPlan } from './plan.js';

const definition = (name: string, description: string, properties: Record<string, { type: string; description: string }>): Tool => ({
  type: 'function',
  function: { name, description, parameters: { type: 'object', properties, required: [] } },
});

/** The plan tool, todo-list style: a plan once, then each subtask marked done in turn. Short, so the fixed prompt stays small. */
export const PLAN_TOOL: Tool = definition('plan', 'Split larger work into subtasks before starting it, or mark the current subtask done.', {
  subtasks: { type: 'array', description: '2 to 6 of {id, title, instructions, depends_on: [ids]}' },
  done: { type: 'string', description: 'id of the subtask you finished' },
  note: { type: 'string', description: 'what you did and found' },
});

/**
 * The core's own tools (`core`): `plan`. It only reads and checks the call; the loop, which owns the
 * run's state, applies it and answers with the next instruction.
 */
export class CoreToolSource implements ToolSource {
  readonly id = 'core';

  constructor(private readonly maxSubtasks: number) {}

  async tools(): Promise<OfferedTool[]> {
    return [{ definition: PLAN_TOOL, effect: 'read', stepKind: 'tool_call' }];
  }

  async execute(call: ChatToolCall, context: ToolCallContext): Promise<ToolResult> {
    const args = call.function.arguments;
    const step = async (name: string, outcome: 'ok' | 'error', detail: Record<string, unknown>) =>
      context.events.emit({
        type: 'step',
        taskId: context.taskId,
        step: { taskId: context.taskId, subtask: context.subtask, kind: 'plan', name, outcome, durationMs: 0, startedAt: nowIso(), detail },
      });
    if (args.subtasks !== undefined) {
      const read = readPlan(args.subtasks, this.maxSubtasks);
      if ('problem' in read) {
        await step('plan', 'error', { error: read.problem });
        return { output: `Error: ${read.problem}. Call plan again with a valid plan, or do the work without one.`, isError: true };
      }
      await step('plan', 'ok', { subtasks: read.subtasks });
      return { output: '', plan: { subtasks: read.subtasks } };
    }
    if (typeof args.done === 'string' && args.done.trim() !== '') {
      const note = typeof args.note === 'string' ? args.note : '';
      await step('done', 'ok', { done: args.done, note: note.slice(0, 500) });
      return { output: '', plan: { done: args.done.trim(), note } };
    }
    return { output: 'Error: call plan with subtasks (to make a plan) or with done (the id of the subtask you finished).', isError: true };
  }
}
