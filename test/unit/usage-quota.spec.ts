import { describe, expect, it } from '@jest/globals';
import { QuotaExceeded } from '../../src/common/agent-error.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { Metrics } from '../../src/metrics/metrics.js';
import type { TraceRepository } from '../../src/agent/trace.repository.js';
import type { UsageDay, UsageRepository } from '../../src/usage/usage.repository.js';
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

/** A trace whose only Task, t1, made 3 model calls and 2 tool calls. */
const trace = { callCounts: async (taskId: string) => (taskId === 't1' ? { modelCalls: 3, toolCalls: 2 } : { modelCalls: 0, toolCalls: 0 }) } as unknown as TraceRepository;

const service = (quotas: Record<string, unknown>, repository: UsageRepository) => new UsageService(repository, trace, validateConfig({ quotas }), new Metrics());

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

  it('takes a running Task’s limit from the groups it was accepted with', async () => {
    const { repository, asked } = usageOf('alice', '2026-12-06', 70);
    const quotas = service({ tokens_per_user_day: 100, tokens_per_user_day_by_group: { heavy: 500 } }, repository);
    expect(await quotas.quotaOfTask('alice', ['heavy'], '2026-12-06')).toEqual({ limit: 500, used: 70 });
    expect(await quotas.quotaOfTask('alice', [], '2026-12-06')).toEqual({ limit: 100, used: 70 });
    expect(await service({}, repository).quotaOfTask('alice', ['heavy'], '2026-12-06')).toBeNull();
    expect(asked).toEqual([
      ['alice', '2026-12-06'],
      ['alice', '2026-12-06'],
    ]);
  });

  it('adds an ended Task to its owner’s day with the tokens handed over and the calls its trace counts', async () => {
    const added: Omit<UsageDay, 'tasks'>[] = [];
    const repository = { addTask: async (day: Omit<UsageDay, 'tasks'>) => void added.push(day) } as unknown as UsageRepository;
    const ended = { taskId: 't1', owner: 'alice', inputTokens: 120, outputTokens: 30, startedAt: new Date(NOW - 4500).toISOString() };
    await service({}, repository).recordTask(ended, NOW);
    await service({}, repository).recordTask({ ...ended, taskId: 't2', startedAt: null }, NOW);
    expect(added).toEqual([
      { owner: 'alice', day: '2026-12-06', modelCalls: 3, toolCalls: 2, inputTokens: 120, outputTokens: 30, wallMs: 4500 },
      { owner: 'alice', day: '2026-12-06', modelCalls: 0, toolCalls: 0, inputTokens: 120, outputTokens: 30, wallMs: 0 },
    ]);
  });

  it('logs a usage it could not add, never failing the Task’s ending', async () => {
    const repository = { addTask: async () => Promise.reject(new Error('database is locked')) } as unknown as UsageRepository;
    await expect(service({}, repository).recordTask({ taskId: 't1', owner: 'alice', inputTokens: 1, outputTokens: 1, startedAt: null }, NOW)).resolves.toBeUndefined();
  });

  it('keys days in UTC', () => {
    expect(utcDay(NOW)).toBe('2026-12-06');
    expect(nextUtcMidnight(NOW).toISOString()).toBe('2026-12-07T00:00:00.000Z');
    expect(nextUtcMidnight(Date.UTC(2026, 11, 31, 12)).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });
});
