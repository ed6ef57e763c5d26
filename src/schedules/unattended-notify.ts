import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { RunEvent } from '../agent/core/run-events.js';
import { Clock, nowIso, SYSTEM_CLOCK } from '../common/clock.js';
import { TaskEvents } from '../events/task-events.js';
import { PushDeliveries } from '../push/push-deliveries.js';
import { PushSigning } from '../push/push-signing.js';
import type { UnattendedSource } from './unattended.js';

/** Where a kind of unattended source is looked up: by the Task one of its runs started, and by id. */
export interface NotifySources {
  kind: 'schedule' | 'trigger';
  ofTask(taskId: string): Promise<UnattendedSource | null>;
  find(id: string): Promise<UnattendedSource | null>;
}

type Told = Extract<RunEvent, { type: 'ended' | 'paused' }>;

/**
 * A schedule's or trigger's `notify` webhook: told when each of its Tasks ends, and when one pauses for
 * an approval or a question (`approvals: wait`), by the process that saw it. Posted through the push
 * outbox (the same allowlist, retries and audit as `webhooks`) and signed like them
 * (`X-OAM-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`) with the secret the source was
 * given when it was made. The owner's A2A push configs and `subscriptions/listen` see these Tasks as
 * any other: nothing here is needed for them.
 */
@Injectable()
export class UnattendedNotify implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('UnattendedNotify');
  private readonly sources = new Map<string, NotifySources>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly events: TaskEvents,
    private readonly deliveries: PushDeliveries,
    private readonly signing: PushSigning,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** Each module with unattended sources says how to find them. */
  register(sources: NotifySources): void {
    this.sources.set(sources.kind, sources);
  }

  onModuleInit(): void {
    this.deliveries.register('notify', async (row) => {
      const [kind, id] = row.target.split('/', 2);
      const source = await this.sources.get(kind)?.find(id);
      return source?.notifySecret && source.notifyUrl === row.url
        ? { 'Content-Type': 'application/json', 'X-OAM-Signature': this.signing.webhookSignature(source.notifySecret, row.payload), 'X-OAM-Delivery': row.id }
        : null;
    });
    this.unsubscribe = this.events.subscribeAll((event, origin) => {
      if (origin !== 'local' || (event.type !== 'ended' && event.type !== 'paused')) return;
      this.tell(event).catch((error: Error) => this.logger.warn(`notify of task ${event.taskId}: ${error.message}`));
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  private async tell(event: Told): Promise<void> {
    for (const sources of this.sources.values()) {
      const source = await sources.ofTask(event.taskId);
      if (!source?.notifyUrl) continue;
      const payload = JSON.stringify({
        type: event.type === 'ended' ? 'task.ended' : 'task.waiting',
        source: { kind: sources.kind, id: source.id, name: source.name },
        task_id: event.taskId,
        owner: source.owner.user,
        ...(event.type === 'ended' ? { status: event.status, result: event.result } : { waiting_for: event.kind, id: event.id }),
        at: nowIso(this.clock),
      });
      await this.deliveries.enqueue({ kind: 'notify', target: `${sources.kind}/${source.id}`, taskId: event.taskId, owner: source.owner.user, url: source.notifyUrl, payload });
      return;
    }
  }
}
