import { Injectable, Logger } from '@nestjs/common';
import { TraceRepository } from '../agent/trace.repository.js';
import { QuotaExceeded } from '../common/agent-error.js';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.js';
import { UsageRepository, type UsageDay } from './usage.repository.js';

/** The UTC day of an instant, as `usage_daily` keys it. */
export const utcDay = (at: number) => new Date(at).toISOString().slice(0, 10);

/** The next UTC midnight after `at`: when a day's quota resets. */
export const nextUtcMidnight = (at: number) => new Date(Date.UTC(new Date(at).getUTCFullYear(), new Date(at).getUTCMonth(), new Date(at).getUTCDate() + 1));

/** The rows one usage report returns at most (a year of 300 users fits). */
export const USAGE_REPORT_ROWS = 100_000;

/** A Task that just ended, as the queue's fenced ending handed it over: whose it is, what it spent, when it started. */
export interface EndedTask {
  taskId: string;
  owner: string;
  inputTokens: number;
  outputTokens: number;
  startedAt: string | null;
}

/**
 * Usage per user and UTC day, and the token quota it enforces (issue 39). A Task's usage is added when
 * it ends, to the day it ended; the quota refuses a new Task of a user whose Tasks that ended today
 * already spent `quotas.tokens_per_user_day` (or their groups' override).
 */
@Injectable()
export class UsageService {
  private readonly logger = new Logger('Usage');

  constructor(
    private readonly usage: UsageRepository,
    private readonly trace: TraceRepository,
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  /** The tokens a day `groups`' member may spend; null when unlimited. The most generous of their groups' overrides wins. */
  limitFor(groups: readonly string[]): number | null {
    const overrides = this.config.quotas.tokensPerUserDayByGroup.filter(([group]) => groups.includes(group)).map(([, tokens]) => tokens);
    const limit = overrides.length > 0 ? (overrides.includes(0) ? 0 : Math.max(...overrides)) : this.config.quotas.tokensPerUserDay;
    return limit === 0 ? null : limit;
  }

  /** Refuses (QuotaExceeded, naming the quota and its reset) a user already at or past their quota today. */
  async assertWithinQuota(user: string, groups: readonly string[], now = Date.now()): Promise<void> {
    const limit = this.limitFor(groups);
    if (limit === null) return;
    const used = await this.usage.tokensOn(user, utcDay(now));
    if (used < limit) return;
    const resetsAt = nextUtcMidnight(now);
    this.metrics.quotaRefusals.inc();
    throw new QuotaExceeded(
      `you have used ${used} tokens today, the most your quota allows (quotas.tokens_per_user_day: ${limit} tokens per UTC day); it resets at ${resetsAt.toISOString()}`,
      resetsAt,
    );
  }

  /** A running Task's quota: its owner's limit (from the groups the Task was accepted with) and what they spent on `day` before it; null when unlimited. */
  async quotaOfTask(owner: string, groups: readonly string[], day: string): Promise<{ limit: number; used: number } | null> {
    const limit = this.limitFor(groups);
    return limit === null ? null : { limit, used: await this.usage.tokensOn(owner, day) };
  }

  /**
   * Adds an ended Task to its owner's day: the tokens its ending wrote, its model and tool calls counted from
   * its trace (the agent's), its wall time. Called once per Task, by the process whose fenced ending went
   * through; a failure is logged, never the Task's.
   */
  async recordTask(ended: EndedTask, now = Date.now()): Promise<void> {
    const wallMs = ended.startedAt ? Math.max(0, now - Date.parse(ended.startedAt)) : 0;
    try {
      const calls = await this.trace.callCounts(ended.taskId);
      await this.usage.addTask({ owner: ended.owner, day: utcDay(now), ...calls, inputTokens: ended.inputTokens, outputTokens: ended.outputTokens, wallMs });
    } catch (error) {
      this.logger.error(`usage of task ${ended.taskId} not recorded: ${(error as Error).message}`);
    }
  }

  /** The days from `from` to `to` (`YYYY-MM-DD`, inclusive), of one user or of all (null). */
  report(from: string, to: string, user: string | null): Promise<UsageDay[]> {
    return this.usage.days(from, to, user, USAGE_REPORT_ROWS);
  }
}
