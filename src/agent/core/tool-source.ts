import type { Tool } from 'ollama';
import type { Clock } from '../../common/clock.js';
import type { ChatToolCall } from '../../ollama/ollama.gateway.js';
import type { FileChange } from '../../workspace/workspace-files.js';
import type { TaskWorkspace } from '../task-workspace.js';
import type { Subtask } from '../plan.js';
import type { RunEvents } from './run-events.js';
import type { StepRecord } from '../trace.repository.js';
import type { FormAnswer, FormSchema } from '../../approvals/person-form.js';

export type { FormAnswer, FormSchema };

/**
 * The agent core's seam 2 of 3 (ADR 0009): where tools come from. The workspace tools, each configured
 * MCP server, and the core's own `plan` / `ask_user` are each one ToolSource; the loop asks every source
 * of the run for its tools and hands each call to the source that offered that name, and does not know
 * which source it is. Sources never pause and never record steps: the ToolExecutor does, asking the
 * offered tool whether a call needs a person (`personRequest`).
 */
export interface ToolSource {
  /** Stable id: `workspace`, `core`, `mcp:<server>`. Shown in the trace and the audit. */
  readonly id: string;
  /** The tools this source offers to this caller, in a fixed order (the prompt's tool block must stay byte-stable). */
  tools(caller: ToolCaller): Promise<OfferedTool[]>;
  /** Runs one call that this source offered. Expected failures are results with `isError`, never exceptions. */
  execute(call: ChatToolCall, context: ToolCallContext): Promise<ToolResult>;
  /**
   * Extension, for a source that dispatches by argument (the MCP catalog's `call_tool`): the tool this call
   * reaches and the call as it reaches it, so that the executor approves it as that tool with those
   * arguments. Absent, or undefined: the call is the offered tool itself.
   */
  resolve?(call: ChatToolCall, caller: ToolCaller): Promise<{ offered: OfferedTool; call: ChatToolCall } | undefined>;
  /** Extension: a run ended; per-run resources of this source (a per-session server process) may go. */
  endRun?(run: { taskId: string; sessionId: string }): Promise<void>;
  /**
   * Extension, read once after `tools` at a run's start: what the model is told about this source in the
   * system prompt (an MCP server that never connected, and why). The same state gives the same lines.
   */
  notices?(caller: ToolCaller): string[];
}

/** One tool as offered: the Ollama definition plus what policy needs to know about it. */
export interface OfferedTool {
  definition: Tool;
  /** How approvals treat it: `read` never asks; `change` asks in `changes` mode; `command` asks in `commands` mode. */
  effect: 'read' | 'change' | 'command';
  /** A per-tool override of `agent.approvals.mode` (an MCP server's `approval: always | never`); absent: follow the mode. */
  approval?: 'always' | 'never';
  /** The trace step kind its calls are recorded as (`tool_call`, `file_op`, `command`, `mcp_tool`). */
  stepKind: 'tool_call' | 'file_op' | 'command' | 'mcp_tool';
  /**
   * Extension (ADR 0020 §3): whether this call needs a person under `policy`, and what they are shown (a
   * command line; a file change's diff and the hash of the file it applies to; a question's options).
   * Absent: `approval`, else `effect` and the mode decide, and the person sees the call's name and arguments.
   */
  personRequest?(call: ChatToolCall, context: ToolCallContext, policy: PersonPolicy): Promise<PersonRequest | null>;
  /** Extension: at resume, after approval, whether what was shown still applies (the file still hashes to `baseSha256`). */
  stillApplies?(call: ChatToolCall, baseSha256: string, context: ToolCallContext): Promise<boolean>;
}

/** What a person is asked about one call: to approve it as shown, or to choose an option of a question. */
export type PersonRequest = { kind: 'approval'; subject: string; diff: string | null; baseSha256: string | null } | { kind: 'question'; question: string; options: string[] };

/** `agent.approvals` as a tool reads it: the mode, and whether a command line is on the allowlist. */
export interface PersonPolicy {
  readonly mode: 'never' | 'commands' | 'changes';
  commandAllowed(command: string): boolean;
}

/** Who the run is for: sources filter by it (an MCP server's `allow_groups`) and may name it (`{user}` headers). */
export interface ToolCaller {
  user: string;
  email: string | null;
  groups: string[];
}

export interface ToolCallContext {
  taskId: string;
  subtask: string;
  signal: AbortSignal;
  workspace: TaskWorkspace;
  caller: ToolCaller;
  /** Where a source reports what it did (a trace step, a file change); see RunEvents. */
  events: RunEvents;
  /** The run's clock: what a source times (an MCP call's audit record) is timed as the run's trace steps are. */
  clock: Clock;
  /** Extension: what `current_task` shows while this call runs (shown again after an in-place wait). */
  label?: string;
  /** Extension: the Ollama model the run is on (its tier's), for a source that calls it (an MCP server's sampling). */
  model?: string;
  /**
   * Extension: asks the Task's person to fill a form while the Task holds its slot (an MCP server's
   * elicitation); present only when someone can answer in place (a Tasks-extension client).
   */
  askPerson?: (form: PersonForm, signal: AbortSignal) => Promise<FormAnswer>;
  /**
   * Extension: the call runs without a person's approval under an approval mode that asks for commands
   * (an allowlisted command). It may read, never change: a pattern cannot tell `git diff` from
   * `git diff --output=FILE`, so the workspace is read-only for it.
   */
  unapproved?: boolean;
}

/** A form another server asks the person to fill during one of its tool calls. */
export interface PersonForm {
  server: string;
  tool: string;
  /** The server's message, as it sent it (shown escaped and bounded). */
  message: string;
  schema: FormSchema;
}

export interface ToolResult {
  /** What the model sees as the tool result, already bounded by the source. */
  output: string;
  /** The call failed (shown to the model as a tool error). */
  isError?: boolean;
  /** A workspace file the call created or changed. */
  change?: FileChange;
  /** Images for a vision model (an MCP tool's image content), as bytes. */
  images?: Buffer[];
  /** Extension: tokens the call spent on the Task's model (an MCP server's sampling requests), counted in the Task's. */
  tokens?: { input: number; output: number };
  /**
   * Extension: what the core's `plan` tool asks of the run (a new plan, or a subtask done). The loop,
   * the only writer of the RunState, applies it and answers with the next instruction.
   */
  plan?: PlanUpdate;
  /**
   * What the trace records of this call. The executor records it, once per call, timed by the run's
   * clock (ADR 0020 §3); sources never emit their own tool steps. Absent: the call leaves no step.
   */
  step?: ToolStep;
}

/** A call's trace step as its source describes it; the executor adds the Task, subtask and timing. */
export interface ToolStep {
  /** Absent: the offered tool's `stepKind`. */
  kind?: StepRecord['kind'];
  /** Absent: the tool's name as called. */
  name?: string;
  /** Absent: `error` when the result is an error, else `ok`. */
  outcome?: StepRecord['outcome'];
  detail: Record<string, unknown>;
}

export type PlanUpdate = { subtasks: Subtask[] } | { done: string };

/**
 * Seam 2b: one call through policy. Returns what the model should see, or a pause: the run then stores
 * its RunState with the pause and ends (or waits in place); it never throws to pause.
 */
export interface ToolExecutor {
  execute(call: ChatToolCall, context: ToolCallContext): Promise<ToolOutcome>;
}

export type ToolOutcome = { kind: 'result'; result: ToolResult } | { kind: 'pause'; pause: PauseRequest };

/** Why a run stops for a person: an approval (confirmation) or a question with options (choice). */
export type PauseRequest =
  | { kind: 'approval'; approvalId: string; call: ChatToolCall; baseSha256: string | null }
  | { kind: 'question'; questionId: string; call: ChatToolCall; question: string; options: string[] };
