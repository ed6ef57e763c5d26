import type { Tool } from 'ollama';
import { nowIso } from '../common/clock.js';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { OfferedTool, ToolCallContext, ToolResult, ToolSource } from './core/tool-source.js';
import { readPlan } from './plan.js';

/** The plan tool, todo-list style: a plan once, then each subtask marked done in turn. Terse: the fixed prompt stays within 800 tokens. */
export const PLAN_TOOL: Tool = {
  type: 'function',
  function: {
    name: 'plan',
    description: 'Split big work into subtasks first, or mark the current one done.',
    parameters: {
      type: 'object',
      properties: {
        subtasks: { type: 'array', description: '2-6 of {id,title,instructions,depends_on}' },
        done: { type: 'string', description: 'id of the finished subtask' },
      },
    },
  },
};

/** Below this context, work is done in one go: the plan tool's 110 tokens and a plan's instructions would crowd the window. */
export const PLAN_MIN_NUM_CTX = 8192;

/**
 * The core's own tools (`core`): `plan`. It only reads and checks the call; the loop, which owns the
 * run's state, applies it and answers with the next instruction.
 */
export class CoreToolSource implements ToolSource {
  readonly id = 'core';

  constructor(private readonly limits: { maxSubtasks: number; numCtx: number }) {}

  async tools(): Promise<OfferedTool[]> {
    return this.limits.numCtx >= PLAN_MIN_NUM_CTX ? [{ definition: PLAN_TOOL, effect: 'read', stepKind: 'tool_call' }] : [];
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
      const read = readPlan(args.subtasks, this.limits.maxSubtasks);
      if ('problem' in read) {
        await step('plan', 'error', { error: read.problem });
        return { output: `Error: ${read.problem}. Call plan again with a valid plan, or do the work without one.`, isError: true };
      }
      await step('plan', 'ok', { subtasks: read.subtasks });
      return { output: '', plan: { subtasks: read.subtasks } };
    }
    if (typeof args.done === 'string' && args.done.trim() !== '') {
      await step('done', 'ok', { done: args.done });
      return { output: '', plan: { done: args.done.trim() } };
    }
    return { output: 'Error: call plan with subtasks (to make a plan) or with done (the id of the subtask you finished).', isError: true };
  }
}
