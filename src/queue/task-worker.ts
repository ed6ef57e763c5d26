import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { SYSTEM_CALLER } from '../identity/caller.js';
import { AbandonedTaskRecovery } from './abandoned-task-recovery.js';
import { RunnerIdentity } from './runner-identity.js';
import { TaskExecution } from './task-execution.js';
import { TasksRepository } from './tasks.repository.js';
import { WORKER_LOG_CONTEXT } from './worker-log.js';

/**
 * The single worker's schedule: claims the oldest queued Task under a lease, has it run, and goes on
 * until none is left. A scheduler interval drives it (and sweeps abandoned leases); `wake()` runs it
 * at once when a Task is queued. The database, not this class, guarantees that only one Task is
 * active application-wide.
 */
@Injectable()
export class TaskWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WORKER_LOG_CONTEXT);
  private draining: Promise<void> | null = null;
  /** A wake that arrived mid-drain, possibly after its last empty claim: drain once more. */
  private wakeAgain = false;
  private stopped = false;

  constructor(
    private readonly tasks: TasksRepository,
    private readonly execution: TaskExecution,
    private readonly recovery: AbandonedTaskRecovery,
    private readonly identity: RunnerIdentity,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.audit.record({ caller: SYSTEM_CALLER, action: 'system.start', outcome: 'ok', detail: { runner: this.identity.id } });
    await this.recovery.recover();
    this.scheduler.addInterval(
      'task-worker',
      setInterval(() => this.tick(), this.config.queue.pollIntervalMs),
    );
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
    if ((await Promise.race([running, grace])) === 'timeout') this.execution.interrupt();
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

  private tick(): void {
    if (this.draining) return;
    void this.recovery
      .recover()
      .catch((error) => this.logger.warn(`lease sweep failed: ${(error as Error).message}`))
      .finally(() => this.wake());
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const task = await this.tasks.claimNext(this.identity.id, this.config.queue.leaseMs);
      if (!task) return;
      await this.execution.run(task);
    }
  }
}
