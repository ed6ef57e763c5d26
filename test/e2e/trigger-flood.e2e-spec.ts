import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { adminApi } from '../support/automation-api.js';
import { count, probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';

type Reply = { status: number; retryAfter: string | undefined; body: string };
type Rejection = { source: string | null; detail: string };

/**
 * Issue 38: someone who knows a trigger's URL but not its secret floods it. Each client address is heard
 * `triggers.refused_per_minute` times a minute, then answered 429 before its body is read; the trigger's
 * refusals past that many are audited as one summary; the real sender, from its own address, still gets in.
 */
describe('triggers: a flood of refused deliveries is bounded', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, triggers: { max_body_bytes: 4096, refused_per_minute: 5 } } });
  let trigger: { id: string; path: string; secret: string };

  /** A POST from `from` (a loopback address of its own: every 127.0.0.0/8 address reaches the service). */
  const post = (path: string, body: string, headers: Record<string, string>, from = '127.0.0.1') =>
    new Promise<Reply>((resolve, reject) => {
      const req = request(`${stack.base}${path}`, { method: 'POST', localAddress: from, headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  /** What GitHub sends (docs.github.com, "Validating webhook deliveries"). */
  const signed = (body: string) => ({
    'X-Hub-Signature-256': `sha256=${createHmac('sha256', trigger.secret).update(body).digest('hex')}`,
    'X-GitHub-Event': 'issues',
    'X-GitHub-Delivery': randomUUID(),
  });
  const rejections = (like: string) =>
    probe<Rejection>(stack.database, "SELECT source, detail FROM audit_events WHERE action = 'trigger.rejected' AND detail LIKE ? ORDER BY seq", `%${like}%`);

  beforeAll(async () => {
    stack.ollama.setFallback({ content: 'Triaged.', promptEvalCount: 3, evalCount: 3 });
    trigger = (await adminApi(stack.base, as('alice@example.com'))('POST', 'triggers', { name: 'flooded', kind: 'github', request: 'Triage {{event}}' })).body;
  });

  it('500 unsigned deliveries: 5 heard (401), the rest 429 before the body, 5 audit events and one summary; the real sender still starts its Task', async () => {
    const statuses: number[] = [];
    for (let n = 0; n < 500; n++) {
      // Every tenth is over max_body_bytes: once the address is past its refusals it is 429 like the rest, its size never looked at.
      const reply = await post(trigger.path, n % 10 === 9 ? JSON.stringify({ blob: 'x'.repeat(8192) }) : '{"issue":{"title":"x"}}', { 'X-GitHub-Event': 'issues' });
      statuses.push(reply.status);
      if (reply.status === 429) expect(Number(reply.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(reply.body).not.toContain('issue');
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5).every((status) => status === 429)).toBe(true);
    // Unknown trigger ids share one count, so random ids do not start a window each.
    const unknown: number[] = [];
    for (let n = 0; n < 30; n++) unknown.push((await post(`/v1/triggers/${randomUUID()}`, '{}', {}, '127.0.0.3')).status);
    expect(unknown).toEqual([...Array<number>(5).fill(404), ...Array<number>(25).fill(429)]);

    // The owner's sender, from its own address, is heard: its signed delivery starts one Task.
    const tasks = await count(stack.database, 'tasks');
    const body = JSON.stringify({ issue: { title: 'real' } });
    const real = await post(trigger.path, body, signed(body), '127.0.0.2');
    expect(real.status).toBe(202);
    expect(JSON.parse(real.body)).toMatchObject({ state: 'started', replay: false });
    expect(await count(stack.database, 'tasks')).toBe(tasks + 1);
    // The trade-off: a signed delivery from the flooding address waits with it, as its body is not read.
    expect((await post(trigger.path, body, signed(body))).status).toBe(429);

    // Within the minute: only the first five refusals were audited one by one.
    const alone = await rejections(trigger.id);
    expect(alone.map((event) => JSON.parse(event.detail) as { status: number })).toEqual(Array(5).fill(expect.objectContaining({ status: 401 })));
    // Shutdown says the held refusals in one summary each (else the minute's end does).
    await stack.service.stop();
    const summaries = (await rejections(trigger.id)).slice(5).map((event) => JSON.parse(event.detail) as Record<string, unknown>);
    expect(summaries).toEqual([expect.objectContaining({ trigger: trigger.id, summary: true, count: 496, statuses: { 429: 496 }, addresses: 1 })]);
    const unknownEvents = await rejections('no such trigger');
    const unknownSummary = await rejections('"trigger":"unknown"');
    expect(unknownEvents).toHaveLength(5);
    expect(unknownSummary.map((event) => JSON.parse(event.detail) as Record<string, unknown>)).toEqual([expect.objectContaining({ count: 25, statuses: { 429: 25 } })]);
  });
});
