import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AgentFailure, AgentRunner, type TaskProgress } from '../agent/agent-runner.js';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { SYSTEM_CALLER } from '../identity/caller.js';
import { RunnerIdentity } from './runner-identity.js';
import { TaskConversation } from './task-conversation.js';
import type { TaskStatus } from './task-status.js';
import type { TaskEntity } from './task.entity.js';
import { TasksRepository, type Lease } from './tasks.repository.js';

export const INTERRUPTED =
  'Interrupted: the service stopped while this task was running; it was not resumed because its actions may not be repeatable.';
const INTERRUPTED_PLANNING_TWICE = 'Interrupted: the service stopped twice while this task was being planned.';
const INTERRUPTED_BY_SHUTDOWN = 'Interrupted: the service shut down before this task finished.';
const CANCELLED = 'Cancelled on request.';

/**
 * The single worker: claims the oldest queued Task under a lease, runs it with the agent while
 * renewing the lease, ends it, and goes on. A scheduler interval drives it (and sweeps abandoned
 * leases); `wake()` runs it at once when a Task is queued. The database, not this class, guarantees
 * that only one Task is active application-wide.
 */
@Injectable()
export class TaskWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(TaskWorker.name);
  private readonly identity = new RunnerIdentity();
  private draining: Promise<void> | null = null;
  /** A wake that arrived mid-drain, possibly after its last empty claim: drain once more. */
  private wakeAgain = false;
  private stopped = false;
  private current: { lease: Lease; controller: AbortController } | null = null;

  constructor(
    private readonly tasks: TasksRepository,
    private readonly conversation: TaskConversation,
    private readonly agent: AgentRunner,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.audit.record({ caller: SYSTEM_CALLER, action: 'system.start', outcome: 'ok', detail: { runner: this.identity.id } });
    await this.recoverAbandoned();
    this.scheduler.addInterval('task-worker', setInterval(() => this.tick(), this.config.queue.pollIntervalMs));
    this.wake();
  }

  /**
   * Graceful stop: claim nothing more, let the running Task finish within the grace period, then
   * interrupt it. Queued Tasks stay queued for the next start (or another replica).
   */
  async stop(graceMs: number): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // Best effort: a database that is already gone must not keep the process from stopping.
    await this.audit.record({ caller: SYSTEM_CALLER, action: 'system.stop', outcome: 'ok', detail: { runner: this.identity.id, graceMs } }).catch(() => undefined);
    if (this.scheduler.doesExist('interval', 'task-worker')) this.scheduler.deleteInterval('task-worker');
    const running = this.draining;
    if (!running) return;
    const grace = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), graceMs).unref());
    if ((await Promise.race([running, grace])) === 'timeout') this.current?.controller.abort(new ShutdownSignal());
    await running;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop(0);
  }

  /** Starts draining the queue unless a drain is already in progress here. */
  wake(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.wakeAgain = true;
      return;
    }
    this.wakeAgain = false;
    this.draining = this.drain()
      .catch((error) => this.logger.error(`worker tick failed: ${(error as Error).message}`))
      .finally(() => {
        this.draining = null;
        if (this.wakeAgain) this.wake();
      });
  }

  /** Fires the cancellation token of the Task running in this process, if it is that one. */
  cancelLocal(taskId: string): boolean {
    if (this.current?.lease.taskId !== taskId) return false;
    this.current.controller.abort(new CancelSignal());
    return true;
  }

  private tick(): void {
    if (this.draining) return;
    void this.recoverAbandoned()
      .catch((error) => this.logger.warn(`lease sweep failed: ${(error as Error).message}`))
      .finally(() => this.wake());
  }

  /** Tasks whose runner died: `running` ones fail (their side effects are not repeated), `planning` ones are re-queued once. */
  private async recoverAbandoned(): Promise<void> {
    for (const task of await this.tasks.abandoned((owner) => this.identity.isDead(owner))) {
      const requeue = task.status === 'planning' && task.attempt < 2;
      const reason = task.status === 'planning' ? INTERRUPTED_PLANNING_TWICE : INTERRUPTED;
      if (!(await this.tasks.reclaim(task, requeue ? 'queued' : 'failed', reason))) continue;
      this.logger.warn(`task ${task.id} was ${task.status} under ${task.leaseOwner ?? 'no owner'}; ${requeue ? 're-queued' : 'marked failed'}`);
      await this.recordStatus(task, requeue ? 'queued' : 'failed', requeue ? 'runner stopped while planning; re-queued' : reason);
    }
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const task = await this.tasks.claimNext(this.identity.id, this.config.queue.leaseMs);
      if (!task) return;
      await this.recordStatus(task, 'planning');
      await this.runClaimed(task);
    }
  }

  private async runClaimed(task: TaskEntity): Promise<void> {
    const lease: Lease = { taskId: task.id, attempt: task.attempt, owner: this.identity.id };
    const controller = new AbortController();
    this.current = { lease, controller };
    const queuedMs = Date.parse(task.startedAt ?? task.createdAt) - Date.parse(task.createdAt);
    this.logger.log(`task ${task.id} started: owner ${task.owner}, session ${task.sessionId}, queued ${seconds(queuedMs)}`);
    const renewal = this.keepLease(lease, controller);
    let progressSoFar: TaskProgress = {};
    const report = async (progress: TaskProgress) => {
      progressSoFar = { ...progressSoFar, ...progress };
      if (progress.status && progress.status !== task.status) await this.recordStatus(task, progress.status);
      if (!(await this.tasks.updateProgress(lease, progress))) controller.abort(new LeaseLost());
    };
    try {
      const input = await this.conversation.agentInput(task);
      const outcome = await this.agent.run(input, report, controller.signal);
      if (controller.signal.aborted) throw controller.signal.reason;
      await this.end(task, lease, 'completed', outcome.result, { ...progressSoFar, ...outcome.progress });
    } catch (error) {
      const reason = controller.signal.reason;
      if (reason instanceof LeaseLost) this.logger.warn(`task ${task.id}: lease lost; stopped without further writes`);
      else if (reason instanceof CancelSignal) await this.end(task, lease, 'cancelled', CANCELLED, progressSoFar);
      else if (reason instanceof ShutdownSignal) await this.end(task, lease, 'failed', INTERRUPTED_BY_SHUTDOWN, progressSoFar);
      else if (error instanceof AgentFailure) await this.end(task, lease, 'failed', error.message, { ...progressSoFar, ...error.progress });
      else {
        this.logger.error(`task ${task.id} crashed: ${(error as Error).stack ?? String(error)}`);
        await this.end(task, lease, 'failed', `Internal error: ${(error as Error).message ?? String(error)}`, progressSoFar);
      }
    } finally {
      renewal.stop();
      this.current = null;
    }
  }

  /**
   * Renews the lease a few times per lease period and watches the cancel flag (set by any replica).
   * If the lease cannot be renewed before it lapses, the run stops itself: another runner may take over.
   */
  private keepLease(lease: Lease, controller: AbortController): { stop(): void } {
    const { leaseMs, pollIntervalMs } = this.config.queue;
    let lastRenewed = Date.now();
    const timer = setInterval(async () => {
      if (controller.signal.aborted) return;
      try {
        const { held, cancelRequested } = await this.tasks.renew(lease, leaseMs);
        if (!held) controller.abort(new LeaseLost());
        else if (cancelRequested) controller.abort(new CancelSignal());
        else lastRenewed = Date.now();
      } catch (error) {
        this.logger.warn(`lease renewal for ${lease.taskId} failed: ${(error as Error).message}`);
        if (Date.now() - lastRenewed > leaseMs * 0.8) controller.abort(new LeaseLost());
      }
    }, Math.min(pollIntervalMs, Math.floor(leaseMs / 3)));
    return { stop: () => clearInterval(timer) };
  }

  private async end(task: TaskEntity, lease: Lease, status: TaskStatus, result: string, progress: TaskProgress): Promise<void> {
    const { status: _ignored, ...fields } = progress;
    if (!(await this.tasks.finish(lease, status, result, fields))) return;
    await this.recordStatus(task, status, result);
    const ranMs = Date.now() - Date.parse(task.startedAt ?? task.createdAt);
    const tokens = `${fields.inputTokens ?? task.inputTokens} in, ${fields.outputTokens ?? task.outputTokens} out`;
    const line = `task ${task.id} ${status} after ${seconds(ranMs)} (tokens ${tokens})${status === 'completed' ? '' : `: ${result.split('\n')[0].slice(0, 200)}`}`;
    if (status === 'failed') this.logger.warn(line);
    else this.logger.log(line);
  }

  private async recordStatus(task: TaskEntity, status: TaskStatus, reason?: string): Promise<void> {
    task.status = status;
    await this.audit.record({
      caller: SYSTEM_CALLER,
      action: 'task.status',
      outcome: status === 'failed' ? 'error' : 'ok',
      taskId: task.id,
      sessionId: task.sessionId,
      detail: { status, attempt: task.attempt, ...(reason && status !== 'completed' ? { reason } : {}) },
    });
  }
}

const seconds = (ms: number) => `${(Math.max(0, ms) / 1000).toFixed(1)} s`;

class CancelSignal extends Error {
  constructor() {
    super('cancelled');
  }
}

class ShutdownSignal extends Error {
  constructor() {
    super('shutdown');
  }
}

class LeaseLost extends Error {
  constructor() {
    super('lease lost');
  }
}
