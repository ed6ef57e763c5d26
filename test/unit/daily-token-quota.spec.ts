import { describe, expect, it } from '@jest/globals';
import { RunLimits, type RunUsage } from '../../src/agent/core/run-limits.js';
import { DailyTokenQuota } from '../../src/usage/daily-token-quota.js';
import type { UsageService } from '../../src/usage/usage.service.js';

const usage = (tokens: number): RunUsage => ({ modelCalls: 0, toolCalls: 0, tokens, wallMs: 0 });
const subject = { taskId: 't1', sessionId: 's1', owner: 'alice', ownerGroups: ['heavy'], budgets: { maxModelCalls: 1, maxToolCalls: 1, maxTokens: 1, maxWallMs: 1 } };

function quota(found: { limit: number; used: number } | null) {
  const asked: unknown[][] = [];
  const usageService = {
    quotaOfTask: async (...args: unknown[]) => {
      asked.push(args);
      return found;
    },
  } as unknown as UsageService;
  const limits = new RunLimits();
  const provider = new DailyTokenQuota(usageService, limits);
  provider.onModuleInit();
  return { provider, limits, asked };
}

describe('the daily token quota on a running Task', () => {
  it('is reached when today’s ended Tasks plus this run’s tokens reach the quota', async () => {
    const { provider, asked } = quota({ limit: 100, used: 60 });
    const limit = await provider.forRun(subject);
    // The owner's groups come with the run (the queue handed them to the agent), not from the Task's row.
    expect(asked).toEqual([['alice', ['heavy'], expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/)]]);
    expect(await limit.check(usage(0))).toBeNull();
    expect(await limit.check(usage(39))).toBeNull();
    expect(await limit.check(usage(40))).toEqual({ limit: 'daily_tokens', detail: '100 tokens today (quotas.tokens_per_user_day: 100 per UTC day)' });
  });

  it('counts a resumed run from where it resumed (its earlier Tasks are in today’s usage already)', async () => {
    const limit = await quota({ limit: 100, used: 60 }).provider.forRun(subject);
    expect(await limit.check(usage(500))).toBeNull();
    expect(await limit.check(usage(539))).toBeNull();
    expect(await limit.check(usage(540))).toMatchObject({ limit: 'daily_tokens' });
  });

  it('never stops a run of an owner without a quota, and registers once with the run limits', async () => {
    const { provider, limits } = quota(null);
    expect(await (await provider.forRun(subject)).check(usage(10 ** 9))).toBeNull();
    expect(() => limits.register(provider)).toThrow(/already registered/);
  });
});
