import type { ChatMessage, ChatRequest, ChatToolCall } from '../../ollama/ollama.gateway.js';
import type { FileChange } from '../../workspace/workspace-files.js';
import type { Subtask } from '../plan.js';
import type { LimitReached, RunBudgets, RunUsage } from './run-limits.js';

/**
 * The agent core's seam 1 of 3 (ADR 0009, version 2 by ADR 0020): everything a run needs to continue, as
 * one plain JSON value. The loop owns it and is the only writer (its collaborators return what happened);
 * a pause stores it as it is (`encodeRunState`), a resume loads it, and nothing else is needed to go on.
 * Nothing here is a class or a Map, so that `JSON.parse(JSON.stringify(state))` is the same state; image
 * bytes are Buffers in memory and travel as Base64 in the encoding.
 */
export interface RunState {
  /** Format version of the stored value; a resume refuses a version it does not know (1 is upgraded). */
  version: 2;
  taskId: string;
  sessionId: string;
  /** The tier the Task runs on (`default`, `high_performance`, …) and the Ollama model it resolved to: a resume keeps both. */
  tier: string;
  model: string;
  /** `agent`: tools and workspace; `direct`: one call, no tools, no workspace. */
  mode: 'agent' | 'direct';
  /** The tool protocol the run talks now: `text` after Ollama refused native tools mid-run (kept across a pause). */
  toolMode: 'native' | 'text';
  /** `think` as the run sends it, resolved once for `model`; a resume sends the same. */
  think: ChatRequest['think'];
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
  /** Model calls of this Task (the per-Task round limit counts them). */
  rounds: number;
  counters: RunCounters;
  /** sha256 of (tool, arguments, output) -> times seen: the same call with the same result stops the run. */
  fingerprints: Record<string, number>;
  /** What the run has spent against its budgets, over every Task that continued it. */
  usage: RunUsage;
  /** The budgets the run is bound by (the config's, lowered by the Task's own), fixed when it started. */
  budgets: RunBudgets;
  /** Set once a limit was reached: the run offers no more tools and asks the model for its summary. */
  stopped?: LimitReached;
  /** Steering messages taken from the inbox and not yet given to the model, and how many the run took in all. */
  steering: { pending: SteerMessage[]; received: number };
  /**
   * Set while the run is stopped for a person (extension, optional): which request it waits for, the
   * call that asked, and for a file change the hash of the file the diff was made from.
   */
  pause?: StoredPause;
}

/** The loop's retry and round counters: kept in the state so that a pause does not reset them. */
export interface RunCounters {
  /** Model calls since the run moved to the current subtask (the per-subtask round limit). */
  roundsInStep: number;
  /** Rounds in a row whose every call was invalid. */
  invalidRounds: number;
  /** The model already got the feedback for an empty reply once. */
  emptyRetried: boolean;
  /** Continuations of an answer cut off at the output limit, and the text cut off so far. */
  continuations: number;
  continued: string;
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
  /** Images the call returned (an MCP tool's image content), for a vision model, until the turn joins the conversation. */
  images?: Buffer[];
}

/** A person's correction to a running Task, as the inbox gave it. */
export interface SteerMessage {
  id: string;
  text: string;
  at: string;
}

/** A new run's state: the fields that differ between runs; the rest starts empty. */
export function newRunState(fields: Pick<RunState, 'taskId' | 'sessionId' | 'tier' | 'model' | 'mode' | 'toolMode' | 'think' | 'budgets'>): RunState {
  return {
    version: 2,
    ...fields,
    messages: [],
    plan: null,
    position: { subtask: '', phase: 'working' },
    turn: { calls: [], results: [] },
    changes: {},
    tokens: { input: 0, output: 0, bySubtask: {} },
    rounds: 0,
    counters: newCounters(),
    fingerprints: {},
    usage: { modelCalls: 0, toolCalls: 0, tokens: 0, wallMs: 0 },
    steering: { pending: [], received: 0 },
  };
}

export const newCounters = (): RunCounters => ({ roundsInStep: 0, invalidRounds: 0, emptyRetried: false, continuations: 0, continued: '' });
