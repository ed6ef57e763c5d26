import type { RunBudgets } from '../agent/core/run-limits.js';
import type { PersonLocale } from '../common/person-locale.js';
import type { SqlStep } from '../database/plain-sql.js';
import type { ConversationTurn } from '../sessions/conversation-turn.js';
import type { CallerTraceContext } from '../telemetry/trace-context.js';

/** An image of a request, validated and decoded by the surface that accepted it. */
export interface TaskRequestImage {
  mimeType: string;
  /** The decoded image: stored and sent to Ollama as bytes. */
  data: Buffer;
  bytes: number;
  /** SHA-256 of the decoded bytes: what the audit log keeps instead of the image. */
  sha256: string;
}

/** A file a request brought along (Chat API `file` part, A2A file part), as the surface received it. */
export interface TaskRequestFile {
  /** The name the client gave (made safe before it reaches the disk). */
  name: string;
  /** The type the client declared (checked against the content); '' when none. */
  mediaType: string;
  data: Buffer;
  /** Where in the request it came from (`messages[0].content[1]`, `message.parts[2]`), for refusals. */
  at: string;
}

/** A file written into the session workspace before the Task was queued: what the audit log keeps of it. */
export interface StagedInputFile {
  path: string;
  mimeType: string;
  bytes: number;
  sha256: string;
}

/** Work for a new Task, as every surface (MCP agent_run, Chat API, A2A) hands it to the queue. */
export interface TaskRequest {
  request: string;
  sessionId: string | null;
  temperature: number | null;
  images: TaskRequestImage[];
  /** Earlier turns to start a new session with (ignored when `sessionId` names an existing one). */
  prelude?: ConversationTurn[];
  /** The Task id when the surface has already named it (A2A's request handler does); else a new UUID. */
  taskId?: string;
  /** Files to write into `inputs/` of the session workspace before the Task is queued (Chat API, A2A). */
  files?: TaskRequestFile[];
  /** What was written of `files`, once staged. */
  inputs?: StagedInputFile[];
  /** The id the new session takes, chosen when its workspace had to exist before the Task (staged files). */
  newSessionId?: string;
  /** Issue 24: start a new session forked from this Task of the caller (its conversation and workspace at that Task). */
  forkFrom?: string;
  /** The request declared the Tasks extension: its client can answer approvals in place (MCP only). */
  answersInPlace?: boolean;
  /** `direct`: one model call without tools or workspace (Chat `agent_mode: false`, A2A skill `direct_llm`); default `agent`. */
  mode?: 'agent' | 'direct';
  /** Issue 35: lower budgets for this Task (Chat `agent_budget`, A2A metadata `agentBudget`); never raises `agent.budgets`. */
  budget?: Partial<RunBudgets>;
  /** The model tier (Chat model id or `agent_level`, A2A `agentLevel`); default `default`, always for MCP. */
  tier?: string;
  /** The language of the texts a person reads about it (Accept-Language on the Chat API, A2A, the console); MCP: none (mcp.locale). */
  locale?: PersonLocale;
  /**
   * A person's decision this Task carries (ApprovalsService.decision): committed with the Task, or
   * neither when its guard refuses (the request was decided first). Needs `taskId`.
   */
  decision?: SqlStep[];
  /**
   * Issue 38: nobody watches this Task (a schedule or a trigger started it). An action that needs a
   * person is refused (`deny`: the agent is told no and goes on) or waits (`wait`: the Task pauses and
   * its owner is told). Never an approval on a person's behalf.
   */
  unattended?: 'deny' | 'wait';
  /**
   * Issue 38: the row that takes a schedule's fire or a trigger's delivery, with its guards: committed
   * with the Task or neither, so no fire or delivery is ever taken without its Task (ADR 0039). Needs `taskId`.
   */
  claim?: SqlStep[];
  /** The caller's W3C trace context (MCP `_meta`, the Chat and A2A `traceparent` header): the Task's trace continues it. */
  trace?: CallerTraceContext;
}
