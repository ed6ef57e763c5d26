import { describe, expect, it } from '@jest/globals';
import { QuotaExceeded } from '../../src/common/agent-error.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { Metrics } from '../../src/metrics/metrics.js';
import type { UsageRepository } from '../../src/usage/usage.repository.js';
import { nextUtcMidnight, UsageService, utcDay } from '../../src/usage/usage.service.js';

/** A usage table of one row: what `owner` spent on `day`. */
const usageOf = (owner: string, day: string, tokens: number) => {
  const asked: [string, string][] = [];
  const repository = {
    tokensOn: async (who: string, when: string) => {
      asked.push([who, when]);
      return who === owner && when === day ? tokens : 0;
    },
  } as unknown as UsageRepository;
  return { repository, asked };
};

const service = (quotas: Record<string, unknown>, repository: UsageRepository) => new UsageService(repository, validateConfig({ quotas }), new Metrics());

// 2026-12-06 23:59:30 UTC: the reset is 30 s away.
const NOW = Date.UTC(2026, 11, 6, 23, 59, 30);

describe('the daily token quota', () => {
  it('takes the user’s limit, or the most generous of their groups’ (0: none)', () => {
    const { repository } = usageOf('alice', '2026-12-06', 0);
    const quotas = service({ tokens_per_user_day: 1000, tokens_per_user_day_by_group: { heavy: 50_000, light: 100, unlimited: 0 } }, repository);
    expect(quotas.limitFor([])).toBe(1000);
    expect(quotas.limitFor(['dev'])).toBe(1000);
    expect(quotas.limitFor(['light'])).toBe(100);
    expect(quotas.limitFor(['light', 'heavy'])).toBe(50_000);
    expect(quotas.limitFor(['heavy', 'unlimited'])).toBeNull();
    expect(service({}, repository).limitFor(['heavy'])).toBeNull();
  });

  it('refuses a user at or past it, naming the quota and the next UTC midnight', async () => {
    const { repository, asked } = usageOf('alice', '2026-12-06', 1000);
    const quotas = service({ tokens_per_user_day: 1000 }, repository);
    const refusal = await quotas.assertWithinQuota('alice', [], NOW).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(QuotaExceeded);
    expect((refusal as QuotaExceeded).message).toBe(
      'you have used 1000 tokens today, the most your quota allows (quotas.tokens_per_user_day: 1000 tokens per UTC day); it resets at 2026-12-07T00:00:00.000Z',
    );
    expect((refusal as QuotaExceeded).retryAfterS(NOW)).toBe(30);
    expect(asked).toEqual([['alice', '2026-12-06']]);
    await expect(quotas.assertWithinQuota('bob', [], NOW)).resolves.toBeUndefined();
    await expect(service({ tokens_per_user_day: 1001 }, repository).assertWithinQuota('alice', [], NOW)).resolves.toBeUndefined();
  });

  it('asks nothing of the database when there is no quota', async () => {
    const { repository, asked } = usageOf('alice', '2026-12-06', 10 ** 9);
    await service({}, repository).assertWithinQuota('alice', ['dev'], NOW);
    expect(asked).toEqual([]);
  });

  it('keys days in UTC', () => {
    expect(utcDay(NOW)).toBe('2026-12-06');
    expect(nextUtcMidnight(NOW).toISOString()).toBe('2026-12-07T00:00:00.000Z');
    expect(nextUtcMidnight(Date.UTC(2026, 11, 31, 12)).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });
});
