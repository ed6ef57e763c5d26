import type { Subtask } from './plan.js';

/** One fixed system prompt: it is the first bytes of every prompt, so Ollama can keep it cached. */
export const SYSTEM_PROMPT = `You are a careful software agent working inside a project workspace on the user's machine.
You run in a loop: call tools to inspect and change files or to run commands, read their results, and continue until the work is done.
Paths are relative to the workspace root. Prefer small edits (edit_file) over rewriting whole files.
Report what commands really printed and their real exit codes; never invent results.
When the work is done, answer without calling tools. Always answer in the language of the user's request.`;

export const PLANNING_INSTRUCTION = `Before doing anything, decide how to handle the request above.
Answer with JSON only. Use {"mode":"direct","subtasks":[]} when it can be done in one go (a question, a small change).
Use {"mode":"plan","subtasks":[...]} for larger work: 2 to 6 subtasks, each {"id","title","instructions","depends_on"}, where depends_on lists the ids that must finish first. Titles are short and in the language of the request.`;

export const subtaskInstruction = (subtask: Subtask, index: number, total: number) =>
  `Subtask ${index + 1}/${total} (${subtask.id}): ${subtask.title}\n${subtask.instructions}\nDo this subtask now. When it is done, reply with a short note of what you did and found.`;

export const SUMMARY_INSTRUCTION = `All subtasks are done. Write the final answer for the user: what was done, what was found, and the result of any checks. Answer in the language of the original request.`;
