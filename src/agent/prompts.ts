import type { Subtask } from './plan.js';

/**
 * One fixed system prompt: it is the first bytes of every prompt, so Ollama can keep it cached. With
 * PLAN_GUIDANCE it says when to plan: the model plans through its `plan` tool only when the work needs
 * it, so a question or a small change costs one model call (or one per tool round) and nothing more.
 */
export const SYSTEM_PROMPT = `You are a careful software agent working in the user's project workspace.
You run in a loop: call tools to inspect and change files or to run commands, read their results, and continue until the work is done.
Prefer small edits (edit_file) over rewriting whole files.
Report what commands really printed and their real exit codes; never invent results.
When the work is done, answer without calling tools. Always answer in the language of the user's request.`;

/** The direct mode's system prompt: one answer, no tools, no workspace. */
export const DIRECT_SYSTEM_PROMPT = `You are a helpful assistant. Answer the user's request directly and accurately; you have no tools and no files. Always answer in the language of the user's request.`;

/** When the plan tool is offered (see CORE_TOOLS_MIN_NUM_CTX), the system prompt ends with when to use it. */
export const PLAN_GUIDANCE = `\nUse plan only for multi-step work.`;

/** One subtask's instruction: the plan tool's result (the first, or the next after `done`), or a user turn after a note in prose. */
export const subtaskInstruction = (subtask: Subtask, index: number, total: number) =>
  `Subtask ${index + 1}/${total} (${subtask.id}): ${subtask.title}\n${subtask.instructions}\nDo this subtask now; when it is done, call plan with done "${subtask.id}".`;

export const SUMMARY_INSTRUCTION = `All subtasks are done. Write the final answer for the user: what was done, what was found, and the result of any checks. Answer in the language of the original request.`;

/** After a limit: the one call left, without tools, writes what the person gets. */
export const limitInstruction = (reached: { limit: string; detail: string }) =>
  `The task has reached its limit ${reached.limit} (${reached.detail}). Do not call any tools. Write the final answer for the user now: what was done, what was found, and what is left to do. Answer in the language of the original request.`;

/** What a call of the turn gets when a limit stopped the run before it. */
export const LIMIT_SKIPPED_OUTPUT = (limit: string) => `Not run: the task reached its limit ${limit}.`;

/** The answer of a run stopped by a limit whose summary came back empty. */
export const limitStoppedAnswer = (reached: { limit: string; detail: string }) => `Stopped at the limit ${reached.limit} (${reached.detail}); the model gave no summary.`;

/** What a call of the turn gets when the person's correction arrived before it ran. */
export const STEERED_SKIPPED_OUTPUT = 'Not run: the user sent a correction (next message). Call it again if it still applies.';

/** The person's corrections, as their words at a step boundary (never inside a model call). */
export const steeringMessage = (texts: string[]) => ({
  role: 'user' as const,
  content:
    texts.length === 1
      ? `Correction from the user while you work:\n${texts[0]}`
      : `Corrections from the user while you work:\n${texts.map((text, index) => `${index + 1}. ${text}`).join('\n')}`,
});
