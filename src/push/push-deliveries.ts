import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { SYSTEM_CALLER } from '../identity/caller.js';
import { PushDeliveryRepository, type DeliveryKind, type DeliveryRow } from './push-delivery.repository.js';
import { postPush } from './push-sender.js';
import { checkPushUrl } from './url-guard.js';

/** The headers a delivery authenticates with, or null when its target is gone (the delivery is given up). */
export type DeliveryHeaders = (row: DeliveryRow) => Promise<Record<string, string> | null>;

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 30_000;
/** How long one process holds a delivery for an attempt (longer than any attempt's timeout). */
const CLAIM_MS = 120_000;
/** How often the outbox is swept for deliveries another process left (a crash, a restart). */
const SWEEP_MS = 5000;
const BATCH = 20;

const at = (ms: number) => new Date(ms).toISOString();

/**
 * The outbox every outgoing push goes through (A2A push notifications, webhooks): a delivery is stored
 * first, so it survives a restart and any replica may finish it; then it is attempted at once and, on
 * a failure, again with doubling backoff until `a2a.push.retry_for_ms` after the event. Each attempt is
 * audited. The URL is checked against the allowlist and the address guard again at every attempt (the
 * configuration may have changed since it was stored).
 */
@Injectable()
export class PushDeliveries implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PushDeliveries');
  private readonly headers = new Map<DeliveryKind, DeliveryHeaders>();
  private draining: Promise<void> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private sweep: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly repository: PushDeliveryRepository,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /** Each kind's surface says how its deliveries authenticate. */
  register(kind: DeliveryKind, headers: DeliveryHeaders): void {
    this.headers.set(kind, headers);
  }

  onApplicationBootstrap(): void {
    this.sweep = setInterval(() => this.kick(), SWEEP_MS).unref();
    this.kick();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.sweep) clearInterval(this.sweep);
    if (this.timer) clearTimeout(this.timer);
    await this.draining;
  }

  async enqueue(delivery: Omit<DeliveryRow, 'id' | 'attempts' | 'deadlineAt'>): Promise<void> {
    const now = this.clock.now();
    await this.repository.insert({ ...delivery, deadlineAt: at(now + this.config.a2a.push.retryForMs) }, at(now));
    this.kick();
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.again = false;
    this.draining = this.drain()
      .catch((error: Error) => this.logger.warn(`push outbox: ${error.message}`))
      .finally(() => {
        this.draining = null;
        if (this.again) this.kick();
        else void this.arm();
      });
  }

  private async drain(): Promise<void> {
    for (;;) {
      const ids = await this.repository.due(at(this.clock.now()), BATCH);
      if (ids.length === 0 || this.stopped) return;
      await Promise.all(ids.map((id) => this.attempt(id)));
    }
  }

  /** Wakes up for the next retry that is due before the next sweep. */
  private async arm(): Promise<void> {
    if (this.stopped) return;
    const next = await this.repository.nextAttemptAt().catch(() => null);
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (next === null) return;
    const wait = Date.parse(next) - this.clock.now();
    if (wait < SWEEP_MS) this.timer = setTimeout(() => this.kick(), Math.max(0, wait)).unref();
  }

  private async attempt(id: string): Promise<void> {
    const now = this.clock.now();
    const row = await this.repository.claim(id, at(now), at(now + CLAIM_MS));
    if (!row) return;
    const attempt = row.attempts + 1;
    const checked = checkPushUrl(row.url, this.config.a2a.push.allowedUrls);
    const headers = 'problem' in checked ? null : await this.headers.get(row.kind)?.(row);
    const outcome =
      'problem' in checked
        ? { error: checked.problem }
        : !headers
          ? { error: 'the push target no longer exists' }
          : await postPush(checked.target, row.payload, headers, this.config.a2a.push.timeoutMs);
    const delivered = 'status' in outcome && outcome.status >= 200 && outcome.status < 300;
    const error = delivered ? null : 'status' in outcome ? `HTTP ${outcome.status}` : outcome.error;
    const permanent = 'problem' in checked || !headers || ('refused' in outcome && outcome.refused === true);
    const retryAt = this.clock.now() + Math.min(FIRST_RETRY_MS * 2 ** (attempt - 1), MAX_RETRY_MS);
    const givenUp = !delivered && (permanent || retryAt > Date.parse(row.deadlineAt));
    await this.audit.record({
      caller: SYSTEM_CALLER,
      action: row.kind === 'a2a' ? 'a2a.push' : 'webhook.delivery',
      outcome: delivered ? 'ok' : permanent ? 'rejected' : 'error',
      taskId: row.taskId,
      detail: {
        delivery: row.id,
        url: row.url,
        attempt,
        ...('status' in outcome ? { status: outcome.status } : {}),
        ...(error ? { reason: error } : {}),
        ...(givenUp ? { given_up: true } : {}),
      },
    });
    if (delivered) await this.repository.settle(row.id, 'delivered', attempt, null);
    else if (givenUp) await this.repository.settle(row.id, 'failed', attempt, error);
    else await this.repository.retryAt(row.id, attempt, at(retryAt), error!);
  }
}
