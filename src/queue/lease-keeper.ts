import { Injectable, Logger } from '@nestjs/common';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { CancelSignal, LeaseLost } from './run-signals.js';
import { TasksRepository, type Lease } from './tasks.repository.js';
import { WORKER_LOG_CONTEXT } from './worker-log.js';

/**
 * Keeps a running Task's lease: renews it a few times per lease period and watches the cancel flag
 * (set by any replica). If the lease cannot be renewed before it lapses, the run stops itself:
 * another runner may take over.
 */
@Injectable()
export class LeaseKeeper {
  private readonly logger = new Logger(WORKER_LOG_CONTEXT);

  constructor(
    private readonly tasks: TasksRepository,
    private readonly config: AppConfig,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  keep(lease: Lease, controller: AbortController): { stop(): void } {
    const { leaseMs, pollIntervalMs } = this.config.queue;
    let lastRenewed = this.clock.now();
    const renew = async () => {
      if (controller.signal.aborted) return;
      try {
        const { held, cancelRequested } = await this.tasks.renew(lease, leaseMs);
        if (!held) controller.abort(new LeaseLost());
        else if (cancelRequested) controller.abort(new CancelSignal());
        else lastRenewed = this.clock.now();
      } catch (error) {
        this.logger.warn(`lease renewal for ${lease.taskId} failed: ${(error as Error).message}`);
        if (this.clock.now() - lastRenewed > leaseMs * 0.8) controller.abort(new LeaseLost());
      }
    };
    const timer = setInterval(() => void renew(), Math.min(pollIntervalMs, Math.floor(leaseMs / 3)));
    return { stop: () => clearInterval(timer) };
  }
}
