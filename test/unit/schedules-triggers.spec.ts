import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { type ConfigError, validateConfig } from '../../src/config/agent-config.js';
import { CronSpec, cronProblem } from '../../src/config/cron-spec.js';
import { firePlan } from '../../src/schedules/fire-plan.js';
import { rateWait } from '../../src/triggers/trigger-rate.js';
import { verifyDelivery } from '../../src/triggers/trigger-signature.js';
import { renderRequest } from '../../src/triggers/trigger-template.js';

const at = (iso: string) => new Date(iso);
const problemsOf = (raw: unknown) => {
  try {
    validateConfig(raw);
    return [];
  } catch (error) {
    return (error as ConfigError).problems;
  }
};

describe('cron expressions (croner): five or six fields, IANA zones', () => {
  it('reads five and six fields and names the field of a bad expression or zone', () => {
    expect(cronProblem('*/5 * * * *', 'UTC')).toBeNull();
    expect(cronProblem('*/10 * * * * *', 'Asia/Tokyo')).toBeNull();
    expect(cronProblem('61 * * * *', 'UTC')).toEqual({ field: 'cron', message: expect.stringContaining('minute') });
    expect(cronProblem('* * * * * * * *', 'UTC')).toEqual({ field: 'cron', message: 'expected five fields (minute to day of week) or six (seconds first), got 8' });
    expect(cronProblem('* * * * *', 'Europe/Atlantis')).toEqual({ field: 'timezone', message: expect.stringContaining('not an IANA time zone') });
    expect(() => CronSpec.of('* * * * *', '')).toThrow(/^timezone: /);
  });

  it('fires at the wall-clock time of its zone, across a daylight-saving change as croner documents', () => {
    const berlin = CronSpec.of('0 3 * * *', 'Europe/Berlin');
    expect(berlin.next(at('2026-12-06T00:00:00Z'))).toEqual(at('2026-12-06T02:00:00Z'));
    expect(berlin.next(at('2026-07-06T00:00:00Z'))).toEqual(at('2026-07-06T01:00:00Z'));
    // 02:30 does not exist in Berlin on 2026-03-29 (02:00 -> 03:00): croner runs it once, right after the gap.
    const gap = CronSpec.of('30 2 * * *', 'Europe/Berlin').next(at('2026-03-28T12:00:00Z'));
    expect(gap).toEqual(at('2026-03-29T01:00:00Z'));
  });
});

describe('which fires a due schedule starts (firePlan)', () => {
  const everyMinute = CronSpec.of('* * * * *', 'UTC');

  it('starts the due fire and moves on to the next one after now', () => {
    expect(firePlan(everyMinute, at('2026-12-06T10:00:00Z'), at('2026-12-06T10:00:00.300Z'), 30_000, 'none')).toEqual({
      fires: [at('2026-12-06T10:00:00Z')],
      next: at('2026-12-06T10:01:00Z'),
    });
  });

  it('does not replay fires missed while no replica ran, unless catch_up is last (then the latest once)', () => {
    const due = at('2026-12-06T08:00:00Z');
    const now = at('2026-12-06T10:00:30Z');
    expect(firePlan(everyMinute, due, now, 10_000, 'none')).toEqual({ fires: [], next: at('2026-12-06T10:01:00Z') });
    expect(firePlan(everyMinute, due, now, 10_000, 'last')).toEqual({ fires: [at('2026-12-06T10:00:00Z')], next: at('2026-12-06T10:01:00Z') });
    // Within the grace the late fire is on time: catch_up adds nothing.
    expect(firePlan(everyMinute, due, now, 60_000, 'last').fires).toEqual([at('2026-12-06T10:00:00Z')]);
  });

  it('bounds the fires of one look for a six-field cron after a stall', () => {
    const everySecond = CronSpec.of('* * * * * *', 'UTC');
    const plan = firePlan(everySecond, at('2026-12-06T10:00:00Z'), at('2026-12-06T10:00:25Z'), 30_000, 'none');
    expect(plan.fires).toHaveLength(10);
    expect(plan.next).toEqual(at('2026-12-06T10:00:26Z'));
  });
});

describe('trigger signatures', () => {
  const body = Buffer.from('{"action":"opened"}');
  const secret = 'It is a Secret to Everybody';

  it('checks GitHub’s X-Hub-Signature-256 over the raw body in constant time, and needs the delivery id and event', () => {
    // docs.github.com "Validating webhook deliveries": secret "It's a Secret to Everybody", payload "Hello, World!".
    const example = verifyDelivery(
      'github',
      "It's a Secret to Everybody",
      {
        'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
        'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        'x-github-event': 'issues',
      },
      Buffer.from('Hello, World!'),
      () => undefined,
    );
    expect(example).toEqual({ deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958', event: 'issues' });
    const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    const headers = { 'x-hub-signature-256': signature, 'x-github-delivery': 'd1', 'x-github-event': 'push' };
    expect(verifyDelivery('github', secret, headers, body, () => ({}))).toEqual({ deliveryId: 'd1', event: 'push' });
    expect(verifyDelivery('github', 'another secret', headers, body, () => ({}))).toEqual({ problem: 'X-Hub-Signature-256 does not match the body' });
    expect(verifyDelivery('github', secret, { ...headers, 'x-hub-signature-256': 'sha256=00' }, body, () => ({}))).toEqual({
      problem: 'X-Hub-Signature-256 does not match the body',
    });
    expect(verifyDelivery('github', secret, { ...headers, 'x-github-event': 'bad event\n' }, body, () => ({}))).toEqual({ problem: 'no valid X-GitHub-Event' });
    expect(verifyDelivery('github', secret, {}, body, () => ({}))).toEqual({ problem: 'no X-Hub-Signature-256' });
  });

  it('checks Standard Webhooks with the reference library, five minutes either way', () => {
    const key = `whsec_${Buffer.from('a key of twenty-four byte').toString('base64')}`;
    const sign = (when: Date) => ({
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(when.getTime() / 1000)),
      'webhook-signature': new Webhook(key).sign('msg_1', when, body),
    });
    expect(verifyDelivery('standard', key, sign(new Date()), body, () => ({ type: 'invoice.paid' }))).toEqual({ deliveryId: 'msg_1', event: 'invoice.paid' });
    expect(verifyDelivery('standard', key, sign(new Date()), body, () => ({ type: 'no spaces please' }))).toEqual({ deliveryId: 'msg_1', event: 'webhook' });
    expect(verifyDelivery('standard', key, sign(new Date(Date.now() - 6 * 60_000)), body, () => ({}))).toEqual({ problem: 'Message timestamp too old' });
    expect(verifyDelivery('standard', key, sign(new Date(Date.now() + 6 * 60_000)), body, () => ({}))).toEqual({ problem: 'Message timestamp too new' });
    expect(verifyDelivery('standard', key, { ...sign(new Date()), 'webhook-signature': 'v1,AAAA' }, body, () => ({}))).toEqual({ problem: 'No matching signature found' });
    // An unsigned body is never parsed.
    let asked = 0;
    verifyDelivery('standard', key, { ...sign(new Date()), 'webhook-signature': 'v1,AAAA' }, body, () => ++asked);
    expect(asked).toBe(0);
  });

  it('holds a Standard Webhooks signature over a body that is not JSON (the edge answers 400 for the body, not 401)', () => {
    const key = `whsec_${Buffer.from('a key of twenty-four byte').toString('base64')}`;
    const form = Buffer.from('action=opened');
    const when = new Date();
    const headers = { 'webhook-id': 'msg_2', 'webhook-timestamp': String(Math.floor(when.getTime() / 1000)), 'webhook-signature': new Webhook(key).sign('msg_2', when, form) };
    expect(verifyDelivery('standard', key, headers, form, () => undefined)).toEqual({ deliveryId: 'msg_2', event: 'webhook' });
  });
});

describe('a trigger’s request template', () => {
  it('fills event, delivery and payload paths; a field the event lacks renders empty; values are bounded', () => {
    const event = { event: 'issues', delivery: 'd1', payload: { issue: { title: 'CI is red', labels: [{ name: 'bug' }], number: 7, locked: false } } };
    expect(renderRequest('{{event}} #{{payload.issue.number}}: {{ payload.issue.title }} [{{payload.issue.labels.0.name}}] {{payload.issue.locked}}', event)).toBe(
      'issues #7: CI is red [bug] false',
    );
    expect(renderRequest('x{{payload.nope.deeper}}y{{payload.issue.title.length}}z{{payload.__proto__}}', event)).toBe('xyz');
    expect(renderRequest('{{payload.issue.labels}}', event)).toBe('[{"name":"bug"}]');
    expect(renderRequest('{{payload.big}}', { ...event, payload: { big: 'x'.repeat(5000) } })).toHaveLength(2001);
  });
});

describe('a trigger’s rate', () => {
  it('takes the configured deliveries in a sliding minute, then says when the oldest leaves it', () => {
    const now = Date.parse('2026-12-06T10:00:30.000Z');
    expect(rateWait({ count: 0, oldest: null }, 2, now)).toBe(0);
    expect(rateWait({ count: 1, oldest: '2026-12-06T09:59:40.000Z' }, 2, now)).toBe(0);
    expect(rateWait({ count: 2, oldest: '2026-12-06T09:59:40.000Z' }, 2, now)).toBe(10);
    // Never less than a second, however close the oldest is to leaving.
    expect(rateWait({ count: 2, oldest: '2026-12-06T09:59:30.200Z' }, 2, now)).toBe(1);
  });
});

describe('schedules declared in the configuration', () => {
  const schedule = { name: 'nightly', owner: 'ops@example.com', cron: '0 3 * * *', request: 'Report' };

  it('are validated at boot, each bad key named', () => {
    expect(problemsOf({ schedules: [schedule] })).toEqual([]);
    expect(problemsOf({ schedules: [{ ...schedule, cron: '0 25 * * *' }] })).toEqual([expect.stringMatching(/^schedules\.0\.cron: .*hour/)]);
    expect(problemsOf({ schedules: [{ ...schedule, timezone: 'Moon/Base' }] })).toEqual([expect.stringMatching(/^schedules\.0\.timezone: "Moon\/Base" is not an IANA/)]);
    expect(problemsOf({ schedules: [schedule, schedule] })).toEqual(['schedules.1.name: names another schedule too']);
    expect(problemsOf({ schedules: [{ ...schedule, approvals: 'approve' }] })).toEqual(['schedules.0.approvals: must be one of deny, wait (got "approve")']);
    expect(problemsOf({ schedules: [{ ...schedule, owner: undefined }] })).toEqual(['schedules.0.owner: expected a string']);
    expect(problemsOf({ schedules: [{ ...schedule, tier: 'large' }] })).toEqual(['schedules.0.tier: must be default or a tier of ollama.models']);
    expect(problemsOf({ schedules: [{ ...schedule, notify: { url: 'https://hooks.example.com/x', secret: 's'.repeat(16) } }] })).toEqual([
      'schedules.0.notify.url: must start with one of a2a.push.allowed_urls (the one allowlist for every outgoing push)',
    ]);
  });

  it('read with their keys camel-cased and defaults filled', () => {
    expect(validateConfig({ schedules: [{ ...schedule, catch_up: 'last' }] }).schedules[0]).toEqual({
      ...schedule,
      groups: [],
      timezone: 'UTC',
      session: 'new',
      tier: 'default',
      enabled: true,
      approvals: 'deny',
      catchUp: 'last',
    });
  });
});
