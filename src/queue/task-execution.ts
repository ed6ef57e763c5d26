import { Injectable, Logger } from '@nestjs/common';
import { AgentFailure, AgentRunner, type TaskProgress } from '../agent/agent-runner.js';
import { RunEventHub } from '../agent/run-event-hub.js';
import { ApprovalsService } from '../approvals/approvals.service.js';
import { HistoryService, type TaskHistory } from '../history/history.service.js';
import { LeaseKeeper } from './lease-keeper.js';
import { CancelSignal, LeaseLost, ShutdownSignal } from './run-signals.js';
import { RunnerIdentity } from './runner-identity.js';
import { TaskConversation } from './task-conversation.js';
import { TaskStatusJournal } from './task-status-journal.js';
import type { TaskStatus } from './task-status.js';
import type { TaskEntity } from './task.entity.js';
import { TasksRepository, type Lease } from './tasks.repository.js';
import { WORKER_LOG_CONTEXT } from './worker-log.js';
import { TaskTelemetry } from '../telemetry/task-telemetry.js';
import { UsageService } from '../usage/usage.service.js';
import { tracedTask } from './traced-task.mapper.js';

const INTERRUPTED_BY_SHUTDOWN = 'Interrupted: the service shut down before this task finished.';
const CANCELLED = 'Cancelled on request.';

/**
 * Runs one claimed Task with the agent under its lease, and ends it: completed, failed, cancelled or
 * interrupted. Every write is fenced by the lease; once the lease is lost the run stops without
 * further writes. One Task at a time per process: the worker awaits each run before claiming again.
 */
@Injectable()
export class TaskExecution {
  private readonly logger = new Logger(WORKER_LOG_CONTEXT);
  private current: { lease: Lease; controller: AbortController } | null = null;

  constructor(
    private readonly tasks: TasksRepository,
    private readonly conversation: TaskConversation,
    private readonly agent: AgentRunner,
    private readonly leases: LeaseKeeper,
    private readonly journal: TaskStatusJournal,
    private readonly identity: RunnerIdentity,
    private readonly runEvents: RunEventHub,
    private readonly history: HistoryService,
    private readonly telemetry: TaskTelemetry,
    private readonly usage: UsageService,
    private readonly approvals: ApprovalsService,
  ) {}

  /** Fires the cancellation token of the Task running in this process, if it is that one. */
  cancelLocal(taskId: string): void {
    if (this.current?.lease.taskId === taskId) this.current.controller.abort(new CancelSignal());
  }

  /** Shutdown's grace is over: the running Task, if any, ends interrupted. */
  interrupt(): void {
    this.current?.controller.abort(new ShutdownSignal());
  }

  async run(task: TaskEntity): Promise<void> {
    await this.journal.record(task, 'planning');
    const lease: Lease = { taskId: task.id, attempt: task.attempt, owner: this.identity.id };
    const controller = new AbortController();
    this.current = { lease, controller };
    this.journal.started(task);
    const traced = tracedTask(task);
    this.telemetry.started(traced);
    const renewal = this.leases.keep(lease, controller);
    let progressSoFar: TaskProgress = {};
    const report = async (progress: TaskProgress) => {
      progressSoFar = { ...progressSoFar, ...progress };
      if (progress.status && progress.status !== task.status) await this.journal.record(task, progress.status);
      if (!(await this.tasks.updateProgress(lease, progress))) controller.abort(new LeaseLost());
    };
    // The steering flag is a column of the Task's row (ours): the run closes its inbox through this.
    const closeSteering = (taskId: string, received: number) => this.tasks.closeSteering(taskId, received);
    // Workspace history (issue 24): a checkpoint before the run and one at its end (in `end`), outside the
    // agent loop; an undo request is restored from the history instead of being run by the agent.
    let history: TaskHistory | null = null;
    try {
      history = await this.telemetry.checkpoint(traced, 'before', () => this.history.begin(task));
      const input = await this.conversation.agentInput(task);
      const begun = history;
      // Under the Task's span: a call the run makes to another MCP server carries it (issue 39).
      // The intake's order (input-order.ts): a decision (a question's option named like undo included) comes before undo.
      const undo = this.history.isUndo(task.request) && !(await this.approvals.carriesDecision(task.sessionId, task.id));
      const outcome = await this.telemetry.within(traced, () => (undo ? this.history.undo(begun) : this.agent.run(input, report, controller.signal, closeSteering)));
      if (controller.signal.aborted) throw controller.signal.reason;
      await this.end(task, lease, 'completed', outcome.result, { ...progressSoFar, ...outcome.progress }, history);
    } catch (error) {
      const reason: unknown = controller.signal.reason;
      if (reason instanceof LeaseLost) this.logger.warn(`task ${task.id}: lease lost; stopped without further writes`);
      else if (reason instanceof CancelSignal) await this.end(task, lease, 'cancelled', CANCELLED, progressSoFar, history);
      else if (reason instanceof ShutdownSignal) await this.end(task, lease, 'failed', INTERRUPTED_BY_SHUTDOWN, progressSoFar, history);
      else if (error instanceof AgentFailure) await this.end(task, lease, 'failed', error.message, { ...progressSoFar, ...error.progress }, history);
      else {
        this.logger.error(`task ${task.id} crashed: ${(error as Error).stack ?? String(error)}`);
        await this.end(task, lease, 'failed', `Internal error: ${(error as Error).message ?? String(error)}`, progressSoFar, history);
      }
    } finally {
      renewal.stop();
      this.current = null;
      // A run that lost its lease never ends here: telemetry forgets it all the same.
      this.telemetry.forget(task.id);
    }
  }

  /** The final, fenced write; journaled only when it went through (a lost lease ends nothing here). */
  private async end(task: TaskEntity, lease: Lease, status: TaskStatus, result: string, progress: TaskProgress, history: TaskHistory | null): Promise<void> {
    const { status: _ignored, ...fields } = progress;
    // Issue 24: the end checkpoint, whatever the outcome; the result gains its `diff:` deliverable line.
    if (history) {
      const begun = history;
      result = await this.telemetry.checkpoint(tracedTask(task), 'after', () => this.history.finish(begun, result));
    }
    const finished = await this.tasks.finish(lease, status, result, fields);
    if (!finished) return;
    // Only the ending that went through hands the Task to usage: each Task is added to its owner's day once.
    await this.usage.recordTask({ taskId: task.id, startedAt: task.startedAt, ...finished });
    // A Task that answered another's pause continues that run: its span links to the paused Task's.
    const pausedId = this.telemetry.tracing ? await this.approvals.pausedTaskAnsweredBy(task.id) : null;
    const resumed = pausedId === null ? null : await this.tasks.findById(pausedId);
    this.telemetry.ended(tracedTask(task), status, {
      result,
      inputTokens: fields.inputTokens ?? 0,
      outputTokens: fields.outputTokens ?? 0,
      resumes: resumed && tracedTask(resumed),
    });
    await this.journal.ended(task, status, result, fields);
    if (status === 'completed' || status === 'failed' || status === 'cancelled') await this.runEvents.publish({ type: 'ended', taskId: task.id, status, result });
  }
}
