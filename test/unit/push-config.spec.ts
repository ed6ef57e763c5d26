import { describe, expect, it } from '@jest/globals';
import { type ConfigError, validateConfig } from '../../src/config/agent-config.js';

const problems = (raw: unknown) => {
  try {
    validateConfig(raw);
    return [];
  } catch (error) {
    return (error as ConfigError).problems;
  }
};

const HOOK = { url: 'https://hooks.example.com/oam', secret: 'a-secret-of-sixteen+', owners: ['alice'], groups: [] };

describe('push configuration (a2a.push, webhooks)', () => {
  it('defaults to push off and no webhooks', () => {
    const config = validateConfig({});
    expect(config.a2a.push).toEqual({ allowedUrls: [], auth: 'jwt', retryForMs: 600_000, timeoutMs: 5000 });
    expect(config.webhooks).toEqual([]);
    expect(config.queue.progressPollMs).toBe(2000);
  });

  it('takes webhooks under the allowlist, keys as written', () => {
    const config = validateConfig({ a2a: { push: { allowed_urls: ['https://hooks.example.com/'] } }, webhooks: [HOOK] });
    expect(config.webhooks).toEqual([HOOK]);
  });

  it('refuses a webhook outside the allowlist, a short secret, unknown keys and credentials in URLs, naming the key', () => {
    expect(problems({ webhooks: [HOOK] })).toEqual(['webhooks.0.url: must start with one of a2a.push.allowed_urls (the one allowlist for every outgoing push)']);
    expect(problems({ a2a: { push: { allowed_urls: ['https://'] } }, webhooks: [{ ...HOOK, secret: 'short' }] })).toEqual(['webhooks.0.secret: must be at least 16 characters']);
    expect(problems({ a2a: { push: { allowed_urls: ['https://'] } }, webhooks: [{ ...HOOK, group: ['x'] }] })).toEqual(['webhooks.0.group: unknown key']);
    expect(problems({ a2a: { push: { allowed_urls: ['ftp://x/', 'https://u:p@x/'] } } })).toEqual([
      'a2a.push.allowed_urls.0: must start with http:// or https:// (got "ftp://x/")',
      expect.stringMatching(/^a2a\.push\.allowed_urls\.1: must not hold credentials/),
    ]);
  });

  it("refuses two webhooks with one URL: a delivery is signed with its URL's secret, so one team's Task would reach the receiver as another's (issue 37, own pass)", () => {
    const teamB = { ...HOOK, secret: 'another-secret-of-16', owners: ['bob'] };
    expect(problems({ a2a: { push: { allowed_urls: ['https://'] } }, webhooks: [HOOK, teamB] })).toEqual([
      'webhooks.1.url: the same URL as webhooks.0 (each URL has one secret: merge their owners and groups, or give the receiver two URLs)',
    ]);
  });
});
