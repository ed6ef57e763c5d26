import { Injectable, Logger } from '@nestjs/common';
import { RunEventHub } from '../agent/run-event-hub.js';
import { RunnerIdentity } from './runner-identity.js';
import { TaskStatusJournal } from './task-status-journal.js';
import { TasksRepository } from './tasks.repository.js';
import { WORKER_LOG_CONTEXT } from './worker-log.js';

const INTERRUPTED = 'Interrupted: the service stopped while this task was running; it was not resumed because its actions may not be repeatable.';
const INTERRUPTED_PLANNING_TWICE = 'Interrupted: the service stopped twice while this task was being planned.';

/**
 * Tasks whose runner died (its lease expired, or its process on this host is gone): `running` ones
 * fail, since their side effects must not be repeated; `planning` ones are re-queued once.
 */
@Injectable()
export class AbandonedTaskRecovery {
  private readonly logger = new Logger(WORKER_LOG_CONTEXT);

  constructor(
    private readonly tasks: TasksRepository,
    private readonly identity: RunnerIdentity,
    private readonly journal: TaskStatusJournal,
    private readonly events: RunEventHub,
  ) {}

  async recover(): Promise<void> {
    for (const task of await this.tasks.abandoned((owner) => this.identity.isDead(owner))) {
      const requeue = task.status === 'planning' && task.attempt < 2;
      const reason = task.status === 'planning' ? INTERRUPTED_PLANNING_TWICE : INTERRUPTED;
      if (!(await this.tasks.reclaim(task, requeue ? 'queued' : 'failed', reason))) continue;
      this.logger.warn(`task ${task.id} was ${task.status} under ${task.leaseOwner ?? 'no owner'}; ${requeue ? 're-queued' : 'marked failed'}`);
      await this.journal.record(task, requeue ? 'queued' : 'failed', requeue ? 'runner stopped while planning; re-queued' : reason);
      // Followers, pushes and webhooks learn of the end from here: no runner is left to announce it.
      if (!requeue) await this.events.publish({ type: 'ended', taskId: task.id, status: 'failed', result: reason });
    }
  }
}
