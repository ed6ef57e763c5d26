import type { PersonLocale } from '../common/person-locale.js';
import type { RunBudgets } from './core/run-limits.js';
import type { ConversationTurn } from '../sessions/conversation-turn.js';

/**
 * What the agent reports while it runs a Task: the active status it is in and how far it got. The
 * contract lives here, with the runner, so the queue (which writes it to the Task's row) depends on
 * the agent and not the other way round.
 */
export interface TaskProgress {
  status?: 'planning' | 'running';
  completedSubtasks?: number;
  totalSubtasks?: number;
  currentTask?: string;
  inputTokens?: number;
  outputTokens?: number;
  criticalPathTokens?: number;
  /** The limit that ended the run's tool work (it completed with a summary): `tasks.stopped_by`. */
  stoppedBy?: string;
}

export interface AgentImage {
  mimeType: string;
  /**
   * Decoded bytes, never the Base64 text: the `ollama` client treats an image *string* as a file path
   * and sends that file if it exists, so a crafted "Base64" value such as `/etc///group` would make the
   * service read and forward its own files.
   */
  data: Buffer;
}

export interface AgentTask {
  id: string;
  sessionId: string;
  /** The session's owner, who submitted the Task. */
  owner: string;
  /** The owner's groups when they submitted it. */
  ownerGroups: string[];
  /** The owner's email at submission, or null (an MCP server's `{email}` header). */
  ownerEmail: string | null;
  /** The MCP client that submitted it (name/version), when known. */
  client: string | null;
  /** The submitting request declared the Tasks extension: its client can answer approvals in place. */
  answersInPlace: boolean;
  /** Nobody watches the Task (a schedule or trigger started it): `deny` refuses what needs a person, `wait` pauses; null otherwise. */
  unattended: 'deny' | 'wait' | null;
  /** `direct`: one model call, no tools, no workspace. */
  mode: 'agent' | 'direct';
  /** The model tier the Task runs on (see `ollama.models`). */
  tier: string;
  /** The surface that accepted it (`mcp-http`, `stdio`, `chat`, `a2a`, `http` for the console), null for old Tasks. */
  surface: string | null;
  /** The language of its texts for people outside MCP (null: MCP's, `mcp.locale`). */
  locale: PersonLocale | null;
  request: string;
  /** Lower budgets the request asked for, or null. */
  budget: Partial<RunBudgets> | null;
  temperature: number;
  images: AgentImage[];
  history: ConversationTurn[];
}

export interface AgentOutcome {
  result: string;
  progress: TaskProgress;
}

/** A failure the agent explains itself; its message becomes the Task's `result`. */
export class AgentFailure extends Error {
  constructor(
    message: string,
    readonly progress: TaskProgress = {},
  ) {
    super(message);
    this.name = 'AgentFailure';
  }
}

/**
 * Closes the Task to corrections unless more than the `received` first arrived (SteerInbox.close): the
 * flag is a column of the Task's row, which the queue owns, so the queue hands this over with the Task.
 */
export type CloseSteering = (taskId: string, received: number) => Promise<boolean>;

/**
 * What the queue needs from an agent: run one Task, report progress as it goes, honour the signal.
 * The queue and the transports depend only on this, so a planning agent slots in without touching them.
 */
export abstract class AgentRunner {
  abstract run(task: AgentTask, report: (progress: TaskProgress) => Promise<void>, signal: AbortSignal, closeSteering: CloseSteering): Promise<AgentOutcome>;
}
