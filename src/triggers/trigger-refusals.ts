import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { AuditService } from '../audit/audit.service.js';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { anonymous } from '../identity/caller.js';
import { REFUSAL_WINDOW_MS, RefusalWindows, type RefusalSummary } from './refusal-windows.js';

/** A delivery refused before it reached a trigger's Task. */
export interface Refusal {
  /** The trigger's id, or UNKNOWN_TRIGGER for every id that names none (so random ids share one count). */
  bucket: string;
  /** The id as the request named it (audited). */
  trigger: string;
  address: string;
  status: number;
  reason: string;
  /** The request was at fault (signature, body, size, unknown trigger); a 429 is not. */
  ownFault: boolean;
}

export const UNKNOWN_TRIGGER = 'unknown';

/**
 * The edge's answer to a flood of refused deliveries, in each process (RefusalWindows): a client past
 * `triggers.refused_per_minute` refusals for a trigger waits (429 before its body is read), and a
 * trigger's refusals past that many a minute are audited as one `trigger.rejected` summary with their
 * count when the minute ends (on the next refusal, the minute's sweep, or shutdown).
 */
@Injectable()
export class TriggerRefusals implements BeforeApplicationShutdown {
  private readonly logger = new Logger('TriggerRefusals');
  private readonly windows: RefusalWindows;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly audit: AuditService,
    config: AppConfig,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {
    this.windows = new RefusalWindows(config.triggers.refusedPerMinute);
  }

  /** 0, or the seconds this client waits before its deliveries to this trigger are read again. */
  wait(bucket: string, address: string): number {
    return this.windows.wait(bucket, address, this.clock.now());
  }

  /** Counts and audits a refusal: by itself while the trigger's minute has room, else in the minute's summary. */
  async refused(refusal: Refusal): Promise<void> {
    const { alone, ended } = this.windows.note(refusal.bucket, refusal.address, refusal.status, refusal.ownFault, this.clock.now());
    // A summary is held until its minute ends; the sweep says it then even when no refusal follows.
    this.sweeper ??= setInterval(() => void this.summarise(this.windows.sweep(this.clock.now())), REFUSAL_WINDOW_MS).unref();
    await this.summarise(ended);
    if (!alone) return;
    await this.audit.record({
      caller: anonymous(refusal.address || null, 'trigger'),
      action: 'trigger.rejected',
      outcome: 'rejected',
      detail: { trigger: refusal.trigger, status: refusal.status, reason: refusal.reason },
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    await this.summarise(this.windows.sweep(Infinity));
  }

  private async summarise(summaries: RefusalSummary[]): Promise<void> {
    for (const { trigger, ...summary } of summaries) {
      try {
        await this.audit.record({
          caller: anonymous(null, 'trigger'),
          action: 'trigger.rejected',
          outcome: 'rejected',
          detail: { trigger, summary: true, reason: 'refusals past triggers.refused_per_minute in one minute', ...summary },
        });
      } catch (error) {
        this.logger.error(`the summary of ${summary.count} refused deliveries to trigger ${trigger} was not audited: ${(error as Error).message}`);
      }
    }
  }
}
