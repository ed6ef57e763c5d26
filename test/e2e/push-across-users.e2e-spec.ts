import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { gate } from '../support/gate.js';
import { pollUntil } from '../support/poll.js';

const as = (user: string) => ({ 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-Forwarded-User': user });

/**
 * Issue 37, round three, own pass: what the service pushes out (A2A push notifications, webhooks) for one
 * user's Task never reaches a receiver another user configured, and nobody can attach a receiver to, read
 * or remove the push configuration of another user's Task. Raw JSON-RPC with the proxy's identity headers,
 * as two A2A clients behind an SSO proxy send it.
 */
describe('outgoing pushes across users (auth.mode proxy_headers)', () => {
  const received: { path: string; body: string }[] = [];
  let receiver: Server;
  let receiverUrl = '';
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((done) => receiver.close(done)));

  const stack = useStack({
    config: () => ({
      auth: { mode: 'proxy_headers', trusted_proxies: ['127.0.0.1/32', '::1/128'] },
      a2a: { push: { allowed_urls: [`${receiverUrl}/`] } },
      webhooks: [{ url: `${receiverUrl}/alice-hook`, secret: 'webhook-secret-of-the-tests', owners: ['alice'], groups: [] }],
    }),
  });

  const call = async (user: string, method: string, params: unknown) => {
    const res = await fetch(`${stack.base}/a2a`, { method: 'POST', headers: as(user), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    return (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
  };
  const send = async (user: string, text: string) => {
    const reply = await call(user, 'SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true } });
    if (!reply.result) throw new Error(`SendMessage failed: ${JSON.stringify(reply.error)}`);
    return (reply.result.task as { id: string }).id;
  };
  const status = async (user: string, id: string) => ((await call(user, 'GetTask', { id })).result?.status as { state?: string } | undefined)?.state;

  it('lets nobody attach a receiver to, read or remove the push configuration of another user’s Task; each receiver gets its own Task only', async () => {
    const held = gate();
    stack.ollama.enqueue({ content: 'alice private answer', heldUntil: held.opened }, { content: 'bob private answer', heldUntil: held.opened });
    const alice = await send('alice', 'alice work');
    const bob = await send('bob', 'bob work');
    try {
      const mine = await call('alice', 'CreateTaskPushNotificationConfig', { taskId: alice, url: `${receiverUrl}/alice-push` });
      expect(mine.error).toBeUndefined();
      const configId = mine.result!.id as string;
      await call('bob', 'CreateTaskPushNotificationConfig', { taskId: bob, url: `${receiverUrl}/bob-push` });
      // Bob, on Alice's Task: the same not-found as an unknown id, for every method; nothing stored or removed.
      for (const [method, params] of [
        ['CreateTaskPushNotificationConfig', { taskId: alice, url: `${receiverUrl}/bob-steals` }],
        ['GetTaskPushNotificationConfig', { taskId: alice, id: configId }],
        ['ListTaskPushNotificationConfigs', { taskId: alice }],
        ['DeleteTaskPushNotificationConfig', { taskId: alice, id: configId }],
      ] as const) {
        const reply = await call('bob', method, params);
        expect([method, reply.error?.code, reply.error?.message]).toEqual([method, -32001, expect.stringMatching(/not found/i)]);
      }
      const rows = await probe<{ url: string }>(stack.database, 'SELECT url FROM a2a_push_configs WHERE task_id = ?', alice);
      expect(rows.map((row) => row.url)).toEqual([`${receiverUrl}/alice-push`]);
    } finally {
      held.open();
    }
    for (const [user, id] of [
      ['alice', alice],
      ['bob', bob],
    ] as const)
      await pollUntil(async () => ((await status(user, id)) === 'TASK_STATE_COMPLETED' ? true : undefined), `${user}'s Task completed`);
    // The deliveries of both ends (the webhook is Alice's only).
    await pollUntil(
      async () => {
        const paths = new Set(received.filter((entry) => entry.body.includes('COMPLETED') || entry.body.includes('completed')).map((entry) => entry.path));
        return paths.has('/alice-push') && paths.has('/bob-push') && paths.has('/alice-hook') ? true : undefined;
      },
      'the three receivers were told of the ends',
      { lastSeen: () => JSON.stringify(received.map((entry) => entry.path)) },
    );
    const to = (path: string) => received.filter((entry) => entry.path === path).map((entry) => entry.body);
    expect(received.map((entry) => entry.path).every((path) => ['/alice-push', '/bob-push', '/alice-hook'].includes(path))).toBe(true);
    for (const body of [...to('/alice-push'), ...to('/alice-hook')]) {
      expect(body).toContain(alice);
      expect(body).not.toContain(bob);
      expect(body).not.toContain('bob private answer');
    }
    for (const body of to('/bob-push')) {
      expect(body).toContain(bob);
      expect(body).not.toContain(alice);
      expect(body).not.toContain('alice private answer');
    }
    const [{ n }] = await probe<{ n: number }>(
      stack.database,
      "SELECT COUNT(*) AS n FROM audit_events WHERE actor = 'bob' AND action LIKE '%PushNotificationConfig%' AND outcome = 'rejected'",
    );
    expect(Number(n)).toBe(4);
  });
});
