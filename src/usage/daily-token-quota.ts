import { Injectable, type OnModuleInit } from '@nestjs/common';
import { RunLimits, type LimitReached, type RunLimit, type RunLimitProvider, type RunLimitSubject, type RunUsage } from '../agent/core/run-limits.js';
import { UsageService, utcDay } from './usage.service.js';

/**
 * `quotas.tokens_per_user_day` on a running Task (issue 39; ADR 0020 §5): a limit the loop checks at each step
 * boundary, reached once what the owner's Tasks that ended today spent plus what this run spent since it started
 * here reaches the owner's quota. The loop then ends the run like a budget: the model call in flight finishes, the
 * model summarises, the Task completes and its status names the limit (`daily_tokens`).
 */
@Injectable()
export class DailyTokenQuota implements RunLimitProvider, OnModuleInit {
  readonly id = 'daily_tokens';

  constructor(
    private readonly usage: UsageService,
    private readonly limits: RunLimits,
  ) {}

  onModuleInit(): void {
    this.limits.register(this);
  }

  async forRun(subject: RunLimitSubject): Promise<RunLimit> {
    const quota = await this.usage.quotaOfTask(subject.owner, subject.ownerGroups, utcDay(Date.now()));
    if (quota === null) return { check: () => null };
    // A resumed run's usage also counts its earlier Tasks, which usage_daily already holds: count from here on.
    let from: number | null = null;
    return {
      check: (usage: Readonly<RunUsage>): LimitReached | null => {
        from ??= usage.tokens;
        const spent = quota.used + usage.tokens - from;
        return spent < quota.limit ? null : { limit: 'daily_tokens', detail: `${spent} tokens today (quotas.tokens_per_user_day: ${quota.limit} per UTC day)` };
      },
    };
  }
}
