import type { ChatMessage, ChatToolCall } from '../../ollama/ollama.gateway.js';
import type { FileChange } from '../../workspace/workspace-files.js';
import type { Subtask } from '../plan.js';

/**
 * The agent core's seam 1 of 3 (ADR 0009): everything a run needs to continue, as one plain JSON value.
 * The loop owns it and is the only writer; a pause stores it as it is (`encodeRunState`), a resume loads
 * it, and nothing else is needed to go on. Nothing here is a class, a Map or a Buffer, so that
 * `JSON.parse(JSON.stringify(state))` is the same state (image bytes travel as Base64 in the encoding).
 */
export interface RunState {
  /** Format version of the stored value; a resume refuses a version it does not know. */
  version: 1;
  taskId: string;
  sessionId: string;
  /** The tier the Task runs on (`default`, `high_performance`, …) and the Ollama model it resolved to. */
  tier: string;
  model: string;
  /** `agent`: tools and workspace; `direct`: one call, no tools, no workspace. */
  mode: 'agent' | 'direct';
  /** The model's conversation: only ever appended to (until a compaction), so every prompt extends the last. */
  messages: ChatMessage[];
  /** The plan, once the model made one (its `plan` tool); null while the work needs none. */
  plan: Subtask[] | null;
  /** Where the run stands: the subtask being worked on ('' when none: the direct path or the summary). */
  position: { subtask: string; phase: 'working' | 'summary' | 'done' };
  /** The tool calls of the turn being run and the results so far (they join `messages` once all have run). */
  turn: { calls: ChatToolCall[]; results: TurnResult[] };
  /** Files the Task created or changed, by path: the one place this is computed. */
  changes: Record<string, FileChange>;
  tokens: { input: number; output: number; bySubtask: Record<string, number> };
  /** Model calls so far (the per-Task round limit counts them). */
  rounds: number;
  /**
   * Set while the run is stopped for a person (extension, optional): which request it waits for, the
   * call that asked, and for a file change the hash of the file the diff was made from.
   */
  pause?: StoredPause;
}

export interface StoredPause {
  kind: 'approval' | 'question';
  id: string;
  call: ChatToolCall;
  /** sha256 of the file when the diff was made (`absent` for a new file); null for a command or a question. */
  baseSha256: string | null;
  /** A question's options, as offered (the answer may be given by number). */
  options?: string[];
}

export interface TurnResult {
  call: ChatToolCall;
  output: string;
}
