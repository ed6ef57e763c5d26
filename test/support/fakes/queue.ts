import { SchedulerRegistry } from '@nestjs/schedule';
import type { AgentOutcome, AgentRunner, AgentTask, TaskProgress } from '../../../src/agent/agent-runner.js';
import type { RunEvent } from '../../../src/agent/core/run-events.js';
import { RunEventHub } from '../../../src/agent/run-event-hub.js';
import type { TraceRepository } from '../../../src/agent/trace.repository.js';
import type { ApprovalsService } from '../../../src/approvals/approvals.service.js';
import type { AuditWriter } from '../../../src/audit/audit-writer.js';
import { AuditService } from '../../../src/audit/audit.service.js';
import { validateConfig } from '../../../src/config/agent-config.js';
import type { UnitOfWork } from '../../../src/database/unit-of-work.js';
import type { Caller } from '../../../src/identity/caller.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { AbandonedTaskRecovery } from '../../../src/queue/abandoned-task-recovery.js';
import { LeaseKeeper } from '../../../src/queue/lease-keeper.js';
import { RunnerIdentity } from '../../../src/queue/runner-identity.js';
import type { SessionFork } from '../../../src/queue/session-fork.js';
import { TaskConversation } from '../../../src/queue/task-conversation.js';
import { TaskExecution } from '../../../src/queue/task-execution.js';
import { TaskQueueService } from '../../../src/queue/task-queue.service.js';
import type { TaskRequest } from '../../../src/queue/task-request.js';
import { TaskStatusJournal } from '../../../src/queue/task-status-journal.js';
import { TaskWorker } from '../../../src/queue/task-worker.js';
import type { TasksRepository } from '../../../src/queue/tasks.repository.js';
import type { SessionsRepository } from '../../../src/sessions/sessions.repository.js';
import { SessionsService } from '../../../src/sessions/sessions.service.js';
import type { TaskTelemetry } from '../../../src/telemetry/task-telemetry.js';
import type { Telemetry } from '../../../src/telemetry/telemetry.js';
import type { UsageRepository } from '../../../src/usage/usage.repository.js';
import { UsageService } from '../../../src/usage/usage.service.js';
import { ManualClock } from '../manual-clock.js';
import { buildHistory } from './history.js';
import { MemoryAuditWriter } from './memory-audit.js';
import { MemorySessionsRepository } from './memory-sessions.js';
import { MemoryTasks } from './memory-tasks.js';
import { MemoryUnitOfWork } from './memory-unit-of-work.js';

/** A caller of a surface (MCP by default). */
export const callerOf = (user: string, fields: Partial<Caller> = {}): Caller => ({ user, groups: [], admin: false, transport: 'stdio', address: null, client: null, ...fields });

/** A request as a surface hands it over: a new session, no images. */
export const requestOf = (request: string, fields: Partial<TaskRequest> = {}): TaskRequest => ({ request, sessionId: null, temperature: null, images: [], ...fields });

/** The accepting audit event a surface drafts. */
export const ACCEPTED = { action: 'tool.agent_run', detail: {} };

/**
 * The agent as the queue sees it (AgentRunner): each run waits until the spec ends it (`complete`, `fail`), or its
 * signal aborts (cancel, shutdown), as AgentService's loop does between steps. What the agent does inside a run is
 * specced with test/support/agent-harness.ts.
 */
export class ScriptedAgent implements AgentRunner {
  readonly runs: AgentTask[] = [];
  private readonly endings = new Map<string, (outcome: AgentOutcome) => void>();
  private readonly waiters = new Map<string, () => void>();
  private readonly reports = new Map<string, (progress: TaskProgress) => Promise<void>>();

  run(task: AgentTask, report: (progress: TaskProgress) => Promise<void>, signal: AbortSignal): Promise<AgentOutcome> {
    this.runs.push(task);
    this.reports.set(task.id, report);
    this.waiters.get(task.id)?.();
    return new Promise<AgentOutcome>((resolve, reject) => {
      this.endings.set(task.id, resolve);
      // The reason is the queue's signal (CancelSignal, ShutdownSignal, LeaseLost), as the loop rethrows it.
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
  }

  /** Resolves once the Task's run has started. */
  started(taskId: string): Promise<void> {
    if (this.runs.some((run) => run.id === taskId)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.set(taskId, resolve));
  }

  /** What the loop reports of a run (its row's progress and status), without the events it would emit beside. */
  report(taskId: string, progress: TaskProgress): Promise<void> {
    return this.reports.get(taskId)!(progress);
  }

  complete(taskId: string, result: string): void {
    this.endings.get(taskId)!({ result, progress: { completedSubtasks: 1, totalSubtasks: 1 } });
  }
}

/** Telemetry that runs what it wraps and records nothing (spans and metrics are specced in telemetry.spec.ts). */
export const NO_TELEMETRY = {
  tracing: false,
  accepted: () => undefined,
  started: () => undefined,
  ended: () => undefined,
  forget: () => undefined,
  within: (_task: unknown, work: () => Promise<unknown>) => work(),
  checkpoint: (_task: unknown, _which: unknown, work: () => Promise<unknown>) => work(),
} as unknown as TaskTelemetry;

/**
 * The queue built by hand as TaskQueueModule builds it, on in-memory repositories: the real TaskQueueService,
 * TaskWorker, TaskExecution, LeaseKeeper, SessionsService, AuditService, UsageService, and a ScriptedAgent. The
 * workspace history is off (history.spec.ts specs it). `usedTokens` is what usage_daily says each user spent today.
 */
export function buildQueue(config: Record<string, unknown> = {}, usedTokens: (user: string) => number = () => 0) {
  const appConfig = validateConfig({ history: { enabled: false }, ...config });
  const clock = new ManualClock();
  const tasks = new MemoryTasks(clock);
  const sessionRows = new MemorySessionsRepository();
  const sessions = new SessionsService(sessionRows as unknown as SessionsRepository);
  const auditWriter = new MemoryAuditWriter();
  const audit = new AuditService(auditWriter as unknown as AuditWriter, appConfig, clock);
  const unitOfWork = new MemoryUnitOfWork([tasks, sessionRows]) as unknown as UnitOfWork;
  const hub = new RunEventHub();
  const published: RunEvent[] = [];
  hub.subscribe(async (event) => void published.push(event));
  const usageRows = { tokensOn: async (user: string) => usedTokens(user), addTask: async () => undefined } as unknown as UsageRepository;
  const trace = { callCounts: async () => ({ modelCalls: 0, toolCalls: 0 }) } as unknown as TraceRepository;
  const usage = new UsageService(usageRows, trace, appConfig, new Metrics());
  const repository = tasks as unknown as TasksRepository;
  const identity = new RunnerIdentity();
  const journal = new TaskStatusJournal(audit, clock);
  const agent = new ScriptedAgent();
  const history = buildHistory({ config: appConfig, workspace: {} as never, sessions }).service;
  // No Task carries a decision in these specs: ApprovalsService has its own (approvals and decisions sent as messages).
  const approvals = {
    carriesDecision: async () => false,
    pausedTaskAnsweredBy: async () => null,
    pendingAmong: async () => new Set<string>(),
    pendingTaskIds: async () => [],
  } as unknown as ApprovalsService;
  const execution = new TaskExecution(
    repository,
    new TaskConversation(repository, sessions, appConfig),
    agent,
    new LeaseKeeper(repository, appConfig, clock),
    journal,
    identity,
    hub,
    history,
    NO_TELEMETRY,
    usage,
    approvals,
  );
  const recovery = new AbandonedTaskRecovery(repository, identity, journal, hub);
  const worker = new TaskWorker(repository, execution, recovery, identity, audit, appConfig, new SchedulerRegistry());
  const queue = new TaskQueueService(
    repository,
    sessions,
    audit,
    unitOfWork,
    worker,
    execution,
    appConfig,
    {} as SessionFork,
    hub,
    approvals,
    usage,
    { enabled: false } as Telemetry,
    NO_TELEMETRY,
  );
  /** Resolves with the Task's `ended` event (published once its row holds the result). */
  type Ended = Extract<RunEvent, { type: 'ended' }>;
  const endOf =
    (taskId: string) =>
    (event: RunEvent): event is Ended =>
      event.type === 'ended' && event.taskId === taskId;
  const ended = (taskId: string) =>
    new Promise<Ended>((resolve) => {
      const seen = published.find(endOf(taskId));
      if (seen) return resolve(seen);
      const unsubscribe = hub.subscribe(async (event) => {
        if (!endOf(taskId)(event)) return;
        unsubscribe();
        resolve(event);
      });
    });
  return { queue, worker, tasks, sessionRows, sessions, audit: auditWriter, published, hub, agent, clock, config: appConfig, ended };
}
