import { randomUUID } from 'node:crypto';
import type { AgentTask } from '../../src/agent/agent-runner.js';
import { AgentService } from '../../src/agent/agent.service.js';
import type { RunEvent } from '../../src/agent/core/run-events.js';
import { RunLimits } from '../../src/agent/core/run-limits.js';
import type { SteerMessage } from '../../src/agent/core/run-state.js';
import type { SteerInbox } from '../../src/agent/core/steer-inbox.js';
import type { OfferedTool, ToolResult } from '../../src/agent/core/tool-source.js';
import { COMMAND_TOOL, FILE_TOOLS } from '../../src/agent/tool-definitions.js';
import { conversationAnswer } from '../../src/approvals/approval-texts.js';
import type { ApprovalEntity } from '../../src/approvals/approval.entity.js';
import { ApprovalPolicy } from '../../src/approvals/approval-policy.js';
import type { AgentConfig } from '../../src/config/agent-config.js';
import type { ChatToolCall } from '../../src/ollama/ollama.gateway.js';
import { ManualClock } from './manual-clock.js';

/** Approvals in memory: the rows and the conversation's answer, as ApprovalsService keeps them (no audit). */
export class MemoryApprovals {
  readonly rows: ApprovalEntity[] = [];
  readonly policy: ApprovalPolicy;
  constructor(config: AgentConfig) {
    this.policy = new ApprovalPolicy(config.agent.approvals.mode, config.agent.approvals.allow);
  }
  answersInPlace = () => false;
  async request(input: { taskId: string; sessionId: string; owner: string; tool: string; subject: string; diff: string | null; options?: string[]; resume: string }) {
    const row = {
      ...input,
      id: randomUUID(),
      diffSha256: null,
      options: input.options ? JSON.stringify(input.options) : null,
      form: null,
      state: 'pending',
      waiting: false,
      reason: null,
    } as unknown as ApprovalEntity;
    this.rows.push(row);
    return row;
  }
  async pendingOfSession(sessionId: string) {
    return this.rows.findLast((row) => row.sessionId === sessionId && row.state === 'pending') ?? null;
  }
  async takeAnswer(task: { id: string; sessionId: string; request: string }) {
    const pending = await this.pendingOfSession(task.sessionId);
    if (!pending) return null;
    const answer = conversationAnswer(task.request);
    pending.state = answer === 'approve' ? 'granted' : answer === 'deny' ? 'denied' : 'dropped';
    return { approval: pending, answer };
  }
  async storeResume(id: string, resume: string) {
    this.rows.find((row) => row.id === id)!.resume = resume;
  }
}

/** The workspace's tools in memory: a command and the file tools, each answering `<tool> ok`. */
export class MemoryToolbox {
  readonly id = 'workspace';
  readonly ran: ChatToolCall[] = [];
  async tools(): Promise<OfferedTool[]> {
    return [
      ...FILE_TOOLS.map((definition): OfferedTool => ({ definition, effect: 'change', stepKind: 'file_op' })),
      { definition: COMMAND_TOOL, effect: 'command', stepKind: 'command' },
    ];
  }
  async execute(call: ChatToolCall): Promise<ToolResult> {
    this.ran.push(call);
    return { output: `${call.function.name} ok` };
  }
  async open(task: AgentTask) {
    return { sessionId: task.sessionId, paths: {} as never };
  }
  async preview() {
    return null;
  }
}

/** A steering inbox in memory, per Task: `send` is what the intake does, `take` and `close` what the loop does. */
export class MemoryInbox implements SteerInbox {
  private readonly tasks = new Map<string, { sent: SteerMessage[]; taken: number; closed: boolean }>();
  send(text: string, taskId = 't1'): boolean {
    const inbox = this.of(taskId);
    if (inbox.closed) return false;
    inbox.sent.push({ id: `steer-${taskId}-${inbox.sent.length + 1}`, text, at: '2026-12-01T09:00:00.000Z' });
    return true;
  }
  /** What the intake does for a Task that paused (its inbox closed): the correction waits for the answering Task. */
  keep(text: string, taskId = 't1'): void {
    const inbox = this.of(taskId);
    inbox.sent.push({ id: `steer-${taskId}-${inbox.sent.length + 1}`, text, at: '2026-12-01T09:00:00.000Z' });
  }
  closed(taskId = 't1'): boolean {
    return this.of(taskId).closed;
  }
  async take(taskId: string): Promise<SteerMessage[]> {
    const inbox = this.of(taskId);
    const taken = inbox.sent.slice(inbox.taken);
    inbox.taken = inbox.sent.length;
    return taken;
  }
  async close(taskId: string, received: number): Promise<boolean> {
    const inbox = this.of(taskId);
    if (inbox.sent.length > received) return false;
    inbox.closed = true;
    return true;
  }
  private of(taskId: string) {
    const inbox = this.tasks.get(taskId) ?? { sent: [], taken: 0, closed: false };
    this.tasks.set(taskId, inbox);
    return inbox;
  }
}

/** AgentService built by hand on in-memory stores: no server, no database, no Ollama. */
export function buildAgent(ollama: unknown, config: AgentConfig, options: { clock?: ManualClock; inbox?: MemoryInbox; limits?: RunLimits } = {}) {
  const approvals = new MemoryApprovals(config);
  const toolbox = new MemoryToolbox();
  const events: RunEvent[] = [];
  const steps: RunEvent[] = [];
  const hub = {
    forRun: (required: ((event: RunEvent) => Promise<void> | void)[]) => ({
      emit: async (event: RunEvent) => {
        events.push(event);
        for (const listener of required) await listener(event);
      },
    }),
  };
  const trace = { append: async (step: unknown) => void steps.push(step as RunEvent) };
  const inbox = options.inbox ?? new MemoryInbox();
  const service = new AgentService(
    ollama as never,
    toolbox as never,
    trace as never,
    config,
    approvals as never,
    hub as never,
    { forCaller: async () => [] },
    options.limits ?? new RunLimits(),
    inbox as never,
    options.clock ?? new ManualClock(),
  );
  return { service, approvals, toolbox, events, inbox };
}
