import type { AgentTask, CloseSteering, TaskProgress } from '../../src/agent/agent-runner.js';
import { AgentService } from '../../src/agent/agent.service.js';
import type { RunEvent } from '../../src/agent/core/run-events.js';
import { RunLimits } from '../../src/agent/core/run-limits.js';
import type { SteerMessage } from '../../src/agent/core/run-state.js';
import type { SteerInbox } from '../../src/agent/core/steer-inbox.js';
import type { OfferedTool, ToolResult } from '../../src/agent/core/tool-source.js';
import { COMMAND_TOOL, FILE_TOOLS } from '../../src/agent/tool-definitions.js';
import { commandRequest } from '../../src/agent/workspace-person-requests.js';
import { PausedRuns } from '../../src/agent/paused-runs.js';
import { RunWaitEntity } from '../../src/agent/run-wait.entity.js';
import { ApprovalEntity } from '../../src/approvals/approval.entity.js';
import type { ApprovalAnswer } from '../../src/approvals/approvals.repository.js';
import { ApprovalsService } from '../../src/approvals/approvals.service.js';
import type { AuditRecord } from '../../src/audit/audit.service.js';
import type { AgentConfig } from '../../src/config/agent-config.js';
import { sqlStep, type SqlStep } from '../../src/database/plain-sql.js';
import type { Unit } from '../../src/database/unit-of-work.js';
import type { ChatToolCall } from '../../src/ollama/ollama.gateway.js';
import { ManualClock } from './manual-clock.js';

/**
 * The database in memory, behind the unit of work: a unit's inserts land in their entity's table and its
 * audit items in `events`, all or nothing, as one transaction does. `fails` scripts a write that fails
 * (a full disk, a crash): the whole unit is refused and nothing of it is left.
 */
export class MemoryUnitOfWork {
  private readonly tables = new Map<unknown, object[]>();
  readonly events: AuditRecord[] = [];
  /** Every unit committed, in order. */
  readonly units: Unit[] = [];
  fails: ((step: SqlStep) => boolean) | null = null;

  rows<T extends object>(entity: abstract new () => T): T[] {
    const rows = this.tables.get(entity) ?? [];
    this.tables.set(entity, rows);
    return rows as T[];
  }

  async commit(unit: Unit): Promise<void> {
    const writes = unit.writes ?? [];
    for (const step of writes) {
      if (step.op !== 'insert') throw new Error(`MemoryUnitOfWork stores inserts only, not ${step.op}`);
      if (this.fails?.(step)) throw new Error('SQLITE_FULL: database or disk is full (scripted)');
    }
    for (const step of writes) if (step.op === 'insert') this.rows(step.entity as never).push(...step.items.map((item) => ({ ...item })));
    for (const shared of unit.shared ?? []) this.events.push(shared.item as AuditRecord);
    this.units.push(unit);
  }
}

/** The audit trail in memory: events committed with a unit (`entry`) or on their own (`record`). */
function memoryAudit(unitOfWork: MemoryUnitOfWork) {
  return {
    entry: (record: AuditRecord) => ({ step: null, item: record }),
    record: async (record: AuditRecord) => void unitOfWork.events.push(record),
  };
}

/** ApprovalsRepository in memory, for the conversation's path (a request left for the next turn); rows as the unit of work stored them. */
export class MemoryApprovalsRepository {
  constructor(private readonly unitOfWork: MemoryUnitOfWork) {}
  get rows(): ApprovalEntity[] {
    return this.unitOfWork.rows(ApprovalEntity);
  }
  insertion(row: ApprovalEntity): SqlStep {
    return sqlStep.insert(ApprovalEntity, [row]);
  }
  async findById(id: string) {
    return this.rows.find((row) => row.id === id) ?? null;
  }
  async pendingOfSession(sessionId: string) {
    return this.rows.findLast((row) => row.sessionId === sessionId && row.state === 'pending') ?? null;
  }
  async decidedBy(sessionId: string, answerTaskId: string) {
    return this.rows.find((row) => row.sessionId === sessionId && ['granted', 'denied'].includes(row.state) && row.answerTaskId === answerTaskId) ?? null;
  }
  async takeForSession(sessionId: string, answerTaskId: string, answer: ApprovalAnswer) {
    const pending = await this.pendingOfSession(sessionId);
    return pending ? Object.assign(pending, { ...answer, waiting: false, answerTaskId, answeredAt: AT }) : null;
  }
  /** The request a Task waits for in place, and its owner's answer to it (once). */
  async waitingFor(taskId: string) {
    return this.rows.find((row) => row.taskId === taskId && row.state === 'pending' && row.waiting) ?? null;
  }
  async answerWaiting(id: string, taskId: string, owner: string, answer: ApprovalAnswer) {
    const row = this.rows.find(
      (candidate) => candidate.id === id && candidate.taskId === taskId && candidate.owner === owner && candidate.waiting && candidate.state === 'pending',
    );
    if (row) Object.assign(row, { ...answer, waiting: false, answeredAt: AT });
    return row !== undefined;
  }
  async settle(id: string, state: ApprovalEntity['state']) {
    const row = this.rows.find((candidate) => candidate.id === id && candidate.state === 'pending');
    if (row) Object.assign(row, { state, waiting: false, answeredAt: AT });
  }
}

/** RunWaitsRepository in memory: the pauses' rows as the unit of work stored them. */
export class MemoryRunWaitsRepository {
  constructor(private readonly unitOfWork: MemoryUnitOfWork) {}
  get rows(): RunWaitEntity[] {
    return this.unitOfWork.rows(RunWaitEntity);
  }
  insertion(wait: RunWaitEntity): SqlStep {
    return sqlStep.insert(RunWaitEntity, [wait]);
  }
  async openResume(approvalId: string) {
    return this.rows.find((row) => row.approvalId === approvalId && row.state === 'open')?.resume ?? null;
  }
  async take(approvalId: string, at: string) {
    const row = this.rows.find((candidate) => candidate.approvalId === approvalId && candidate.state === 'open');
    return row ? Object.assign(row, { state: 'taken', takenAt: at }).resume : null;
  }
}

const AT = '2026-12-01T09:00:00.000Z';

/** The workspace's tools in memory: a command and the file tools, each answering `<tool> ok`. */
export class MemoryToolbox {
  readonly id = 'workspace';
  readonly ran: ChatToolCall[] = [];
  async tools(): Promise<OfferedTool[]> {
    return [
      ...FILE_TOOLS.map((definition): OfferedTool => ({ definition, effect: 'change', stepKind: 'file_op' })),
      { definition: COMMAND_TOOL, effect: 'command', stepKind: 'command', personRequest: async (call, _context, policy) => commandRequest(call, policy) },
    ];
  }
  async execute(call: ChatToolCall): Promise<ToolResult> {
    this.ran.push(call);
    return { output: `${call.function.name} ok` };
  }
  async open(task: AgentTask) {
    return { sessionId: task.sessionId, paths: {} as never };
  }
}

/**
 * A steering inbox in memory, per Task: `send` is what the intake does, `take` what the loop does through
 * SteerInboxRepository, `close` what it does through the queue (TasksRepository.closeSteering, handed to the run),
 * `dropKept` what AgentService does when a wait ends with no run to continue it.
 */
export class MemoryInbox implements SteerInbox {
  private readonly tasks = new Map<string, { sent: SteerMessage[]; taken: number; closed: boolean; dropped: SteerMessage[] }>();
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
  /** What `dropKept` ended for the Task `taskId` (run_waits rows `dropped`). */
  dropped(taskId = 't1'): SteerMessage[] {
    return this.of(taskId).dropped;
  }
  async dropKept(taskId: string): Promise<SteerMessage[]> {
    const inbox = this.of(taskId);
    const dropped = inbox.sent.slice(inbox.taken);
    inbox.taken = inbox.sent.length;
    inbox.dropped.push(...dropped);
    return dropped;
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
    const inbox = this.tasks.get(taskId) ?? { sent: [], taken: 0, closed: false, dropped: [] };
    this.tasks.set(taskId, inbox);
    return inbox;
  }
}

/**
 * AgentService run as TaskExecution runs it, which hands the run the Task row's steering flag
 * (TasksRepository.closeSteering): here the memory inbox's, so the specs call `run` with the rest.
 */
class QueuedAgentService extends AgentService {
  constructor(
    private readonly steering: MemoryInbox,
    ...rest: ConstructorParameters<typeof AgentService>
  ) {
    super(...rest);
  }
  override run(task: AgentTask, report: (progress: TaskProgress) => Promise<void>, signal: AbortSignal, closeSteering?: CloseSteering) {
    return super.run(task, report, signal, closeSteering ?? ((taskId, received) => this.steering.close(taskId, received)));
  }
}

/**
 * AgentService built by hand with the real ApprovalsService and PausedRuns on a repository per store in
 * memory (approvals, run waits, the steering inbox) behind one in-memory unit of work: no server, no
 * database, no Ollama. `observe` sees each run event when it is emitted (what is stored by then).
 */
export function buildAgent(
  ollama: unknown,
  config: AgentConfig,
  options: { clock?: ManualClock; inbox?: MemoryInbox; limits?: RunLimits; observe?: (event: RunEvent) => void } = {},
) {
  const clock = options.clock ?? new ManualClock();
  const unitOfWork = new MemoryUnitOfWork();
  const approvalRows = new MemoryApprovalsRepository(unitOfWork);
  const waits = new MemoryRunWaitsRepository(unitOfWork);
  const approvals = new ApprovalsService(approvalRows as never, memoryAudit(unitOfWork) as never, unitOfWork as never, config, clock);
  const pauses = new PausedRuns(waits as never, unitOfWork as never, clock);
  const toolbox = new MemoryToolbox();
  const events: RunEvent[] = [];
  const steps: RunEvent[] = [];
  const hub = {
    forRun: (required: ((event: RunEvent) => Promise<void> | void)[]) => ({
      emit: async (event: RunEvent) => {
        events.push(event);
        options.observe?.(event);
        for (const listener of required) await listener(event);
      },
    }),
  };
  const trace = { append: async (step: unknown) => void steps.push(step as RunEvent) };
  const inbox = options.inbox ?? new MemoryInbox();
  const service = new QueuedAgentService(
    inbox,
    ollama as never,
    toolbox as never,
    trace as never,
    config,
    approvals,
    hub as never,
    { forCaller: async () => [] },
    options.limits ?? new RunLimits(),
    inbox as never,
    pauses,
    clock,
  );
  return { service, approvals, approvalRows, waits, unitOfWork, toolbox, events, inbox };
}
