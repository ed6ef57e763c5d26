import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { RunEvent } from '../agent/core/run-events.js';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { TaskEvents } from '../events/task-events.js';
import { TaskQueueService } from '../queue/task-queue.service.js';
import { PushDeliveries } from './push-deliveries.js';
import { PushDeliveryRepository } from './push-delivery.repository.js';
import { PushSigning } from './push-signing.js';

type Accepted = Extract<RunEvent, { type: 'accepted' }>;
type Ended = Extract<RunEvent, { type: 'ended' }>;

/**
 * The `webhooks` config: when a Task ends, a signed JSON event goes to every webhook whose owners or
 * groups cover the user who queued it, whichever surface accepted it. The webhooks are picked when the
 * Task is accepted (the groups are known only then; the replica that accepted it stores them) and
 * posted by the process that saw it end, through the outbox (allowlist, retries, audit).
 */
@Injectable()
export class Webhooks implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private unsubscribe: (() => void) | null = null;
  private readonly hooks: AppConfig['webhooks'];

  constructor(
    private readonly events: TaskEvents,
    private readonly repository: PushDeliveryRepository,
    private readonly deliveries: PushDeliveries,
    private readonly signing: PushSigning,
    private readonly queue: TaskQueueService,
    config: AppConfig,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    this.hooks = config.webhooks;
  }

  onModuleInit(): void {
    if (this.hooks.length === 0) return;
    this.deliveries.register('webhook', async (row) => {
      const hook = this.hooks.find((candidate) => candidate.url === row.target);
      return hook ? { 'Content-Type': 'application/json', 'X-OAM-Signature': this.signing.webhookSignature(hook.secret, row.payload), 'X-OAM-Delivery': row.id } : null;
    });
    this.unsubscribe = this.events.subscribeAll((event, origin) => {
      if (origin !== 'local') return;
      const done = event.type === 'accepted' ? this.accepted(event) : event.type === 'ended' ? this.ended(event) : null;
      done?.catch((error: Error) => this.logger.warn(`webhooks of task ${event.taskId}: ${error.message}`));
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  private async accepted(event: Accepted): Promise<void> {
    const urls = this.hooks.filter((hook) => hook.owners.includes(event.owner) || hook.groups.some((group) => event.groups.includes(group))).map((hook) => hook.url);
    if (urls.length > 0) await this.repository.addWebhookTargets(event.taskId, urls);
  }

  private async ended(event: Ended): Promise<void> {
    const urls = await this.repository.webhookTargets(event.taskId);
    if (urls.length === 0) return;
    // Whose the Task is, from its owner (the queue): the ended event does not say.
    const task = await this.queue.find(event.taskId);
    if (!task) return;
    const payload = JSON.stringify({
      type: 'task.ended',
      task_id: event.taskId,
      session_id: task.sessionId,
      owner: task.owner,
      status: event.status,
      result: event.result,
      at: nowIso(this.clock),
    });
    for (const url of urls) await this.deliveries.enqueue({ kind: 'webhook', target: url, taskId: event.taskId, owner: task.owner, url, payload });
  }
}
