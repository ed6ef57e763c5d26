import type { Tool } from 'ollama';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { OfferedTool, PersonRequest, ToolResult, ToolSource, ToolStep } from './core/tool-source.js';
import { readPlan } from './plan.js';

const STRING = { type: 'string' };

/**
 * The plan tool, todo-list style: a plan once, then each subtask marked done in turn. Its items are typed
 * (issue 35: a model given the fields only in prose wrote plans as strings): no `required` and no
 * descriptions, so the fixed prompt stays within 800 tokens and no call costs more than before (the
 * parameter descriptions that only repeated their tool's were dropped for it; `npm run bench:agent-calls`).
 */
export const PLAN_TOOL: Tool = {
  type: 'function',
  function: {
    name: 'plan',
    description: 'Plan big work as 2-6 subtasks, or mark one done.',
    parameters: {
      type: 'object',
      properties: {
        subtasks: { type: 'array', items: { type: 'object', properties: { id: STRING, title: STRING, instructions: STRING, depends_on: { type: 'array', items: STRING } } } },
        // Its use is in each subtask's instruction (`call plan with done "<id>"`): no description, a shorter fixed prompt.
        done: { type: 'string' },
      },
    },
  },
};

/** A question with 2 to 6 options for the user; the run waits for the answer (like an approval). */
export const ASK_USER_TOOL: Tool = {
  type: 'function',
  function: {
    name: 'ask_user',
    description: 'Ask the user to choose.',
    parameters: {
      type: 'object',
      properties: { question: { type: 'string' }, options: { type: 'array', description: '2-6 choices' } },
      required: ['question', 'options'],
    },
  },
};

/** Reads an ask_user call: the question and its options, or what is wrong with them. */
export function readQuestion(args: Record<string, unknown>): { question: string; options: string[] } | { problem: string } {
  const question = typeof args.question === 'string' ? args.question.trim() : '';
  let options = args.options;
  if (typeof options === 'string') {
    try {
      options = JSON.parse(options);
    } catch {
      options = undefined;
    }
  }
  if (question === '' || question.length > MAX_QUESTION_CHARS) return { problem: `question must be 1 to ${MAX_QUESTION_CHARS} characters` };
  if (!Array.isArray(options) || options.some((option) => typeof option !== 'string' || option.trim() === '' || option.length > MAX_OPTION_CHARS)) {
    return { problem: `options must be a list of short texts (1 to ${MAX_OPTION_CHARS} characters each)` };
  }
  const distinct = [...new Set((options as string[]).map((option) => option.trim()))];
  if (distinct.length < 2 || distinct.length > 6) return { problem: 'options must hold 2 to 6 different choices' };
  return { question, options: distinct };
}

/** An ask_user call as what its person is asked, or null when it does not read. */
function questionRequest(call: ChatToolCall): PersonRequest | null {
  const read = readQuestion(call.function.arguments);
  return 'problem' in read ? null : { kind: 'question', ...read };
}

const MAX_QUESTION_CHARS = 2000;
const MAX_OPTION_CHARS = 200;

/**
 * Below this context the core's tools are not offered: their 130 tokens, a plan's instructions and a
 * question's round trip would crowd a window that small, where work is done in one go.
 */
export const CORE_TOOLS_MIN_NUM_CTX = 8192;

/**
 * The core's own tools (`core`): `plan` and `ask_user`. A `plan` call is only read and checked here; the
 * loop, which owns the run's state, applies it and answers with the next instruction. `ask_user` is a
 * pause, which the ToolExecutor makes (sources never pause): a call that reaches this source is refused.
 */
export class CoreToolSource implements ToolSource {
  readonly id = 'core';

  constructor(private readonly limits: { maxSubtasks: number; numCtx: number }) {}

  async tools(): Promise<OfferedTool[]> {
    if (this.limits.numCtx < CORE_TOOLS_MIN_NUM_CTX) return [];
    return [
      { definition: PLAN_TOOL, effect: 'read', stepKind: 'tool_call' },
      // A question that reads is for the person (the executor pauses for it); one that does not comes back here as an error.
      { definition: ASK_USER_TOOL, effect: 'read', stepKind: 'tool_call', personRequest: async (call) => questionRequest(call) },
    ];
  }

  async execute(call: ChatToolCall): Promise<ToolResult> {
    const args = call.function.arguments;
    if (call.function.name === ASK_USER_TOOL.function.name) {
      // Only a question that does not read reaches this source (personRequest): the model is told what is wrong.
      const read = readQuestion(args);
      const problem = 'problem' in read ? read.problem : 'the question could not be asked';
      const step: ToolStep = { kind: 'tool_call', detail: { arguments: args, error: problem } };
      return { output: `Error: ${problem}. Call ask_user again with a question and 2 to 6 options.`, isError: true, step };
    }
    if (args.subtasks !== undefined) {
      const read = readPlan(args.subtasks, this.limits.maxSubtasks);
      if ('problem' in read) {
        return {
          output: `Error: ${read.problem}. Call plan again with a valid plan, or do the work without one.`,
          isError: true,
          step: { kind: 'plan', detail: { error: read.problem } },
        };
      }
      return { output: '', plan: { subtasks: read.subtasks }, step: { kind: 'plan', detail: { subtasks: read.subtasks } } };
    }
    if (typeof args.done === 'string' && args.done.trim() !== '') {
      return { output: '', plan: { done: args.done.trim() }, step: { kind: 'plan', name: 'done', detail: { done: args.done } } };
    }
    return { output: 'Error: call plan with subtasks (to make a plan) or with done (the id of the subtask you finished).', isError: true };
  }
}
