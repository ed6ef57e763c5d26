import { afterAll, describe, expect, it } from '@jest/globals';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import { createHmac, randomUUID } from 'node:crypto';
import { adminApi, webhookReceiver } from '../support/automation-api.js';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { gate } from '../support/gate.js';
import { Listen } from '../support/listen-client.js';
import { pollUntil } from '../support/poll.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';

const ALICE = as('alice@example.com');
const BOB = as('bob@example.com');

type Receiver = Awaited<ReturnType<typeof webhookReceiver>>;

/**
 * Issue 38: a Task a schedule or a trigger started reaches people where they look: the source's `notify` webhook
 * (signed like `webhooks`, retried, audited), and the owner's A2A push configs and MCP `subscriptions/listen`,
 * which see it like any other Task of theirs.
 */
describe('unattended Tasks are delivered where people look', () => {
  let receiver: Receiver;
  const stack = useStack({
    config: async () => {
      // Answers 500 to the first POST of each path: every delivery below needs its retry.
      receiver = await webhookReceiver({ failFirst: true });
      return { auth: PROXY_AUTH, a2a: { push: { allowed_urls: [receiver.url], retry_for_ms: 20_000 } } };
    },
  });
  const { ollama } = stack;
  afterAll(() => receiver.close());

  const alice = (method: string, path: string, body?: unknown) => adminApi(stack.base, ALICE)(method, path, body);
  /** What reached `path` with a 200, once `match` holds for one. */
  const delivered = (path: string, match: (body: string) => boolean) =>
    pollUntil(async () => receiver.received.find((post) => post.path === path && post.status === 200 && match(post.body)), `a delivery to ${path}`, {
      lastSeen: () => JSON.stringify(receiver.received.map((post) => [post.path, post.status])),
    });
  /** The owner's A2A client: the SDK, through the trusted proxy's headers. */
  const a2aAs = (identity: Record<string, string>): Promise<A2aClient> => {
    const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), ...identity } });
    return new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    ).createFromUrl(stack.base);
  };

  /**
   * While the Task's model call is held: the owner sets an A2A push config on it and listens to it over MCP, and
   * another user's listen names it too. Then the Task ends; what each of them got.
   */
  async function followed(taskId: string, held: { open: () => void }, hook: string) {
    const a2a = await a2aAs(ALICE);
    const config = await a2a.createTaskPushNotificationConfig({
      tenant: '',
      id: '',
      taskId,
      url: `${receiver.url}${hook.slice(1)}`,
      token: 'owner-token',
      authentication: undefined,
    });
    expect(config).toMatchObject({ taskId });
    await expect(
      (await a2aAs(BOB)).createTaskPushNotificationConfig({ tenant: '', id: '', taskId, url: `${receiver.url}bob`, token: '', authentication: undefined }),
    ).rejects.toThrow(/not found/i);
    const listen = stack.closeOnStop(await new Listen().open(stack.service.url, ALICE, { taskIds: [taskId] }));
    const theirs = stack.closeOnStop(await new Listen().open(stack.service.url, BOB, { taskIds: [taskId] }));
    await listen.until((messages) => messages.some((message) => message.method === 'notifications/tasks'));
    held.open();
    await listen.until((messages) => messages.some((message) => message.method === 'notifications/tasks' && message.params?.status === 'completed'), 15_000);
    const pushed = JSON.parse((await delivered(hook, (body) => body.includes('TASK_STATE_COMPLETED'))).body);
    expect(pushed).toMatchObject({ task: { id: taskId, status: { state: 'TASK_STATE_COMPLETED' } } });
    await listen.close();
    await theirs.close();
    // Bob's stream was acknowledged without the Task (as an unknown id) and told nothing of it.
    expect(JSON.stringify(theirs.messages)).not.toContain(taskId);
  }

  /** The notify post's signature, checked as a receiver would: HMAC-SHA256 of "<t>.<body>" with the source's notify secret. */
  function expectSigned(post: Receiver['received'][number], secret: string) {
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(post.headers['x-oam-signature']))!;
    expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${post.body}`).digest('hex'));
  }

  it('a schedule’s Task: its notify webhook is told of its end (signed, retried after a 500, each attempt audited); the owner’s A2A push config and listen follow it', async () => {
    const schedule = (await alice('POST', 'schedules', { name: 'report', cron: '0 0 1 1 *', request: 'Write the report', notify_url: `${receiver.url}schedule` })).body;
    const held = gate();
    ollama.enqueue({ content: 'The report.', heldUntil: held.opened, promptEvalCount: 3, evalCount: 3 });
    const run = (await alice('POST', `schedules/${schedule.id}/run`)).body as { task_id: string; state: string };
    expect(run.state).toBe('started');
    await followed(run.task_id, held, '/schedule-a2a');
    const told = await delivered('/schedule', (body) => JSON.parse(body).task_id === run.task_id);
    expect(JSON.parse(told.body)).toMatchObject({
      type: 'task.ended',
      source: { kind: 'schedule', id: schedule.id, name: 'report' },
      task_id: run.task_id,
      owner: 'alice@example.com',
      status: 'completed',
      result: expect.stringContaining('The report.'),
    });
    expectSigned(told, schedule.notify_secret);
    const attempts = receiver.received.filter((post) => post.path === '/schedule');
    expect(attempts.map((post) => post.status)).toEqual([500, 200]);
    expect(new Set(attempts.map((post) => post.headers['x-oam-delivery'])).size).toBe(1);
    const audited = await pollUntil(async () => {
      const rows = await probe<{ outcome: string }>(
        stack.database,
        "SELECT outcome FROM audit_events WHERE action = 'webhook.delivery' AND task_id = ? AND detail LIKE '%/schedule\"%' ORDER BY seq",
        run.task_id,
      );
      return rows.at(-1)?.outcome === 'ok' ? rows.map((row) => row.outcome) : undefined;
    }, 'both attempts audited');
    expect(audited).toEqual(['error', 'ok']);
  });

  it('a trigger’s Task: its notify webhook is told of its end, and the owner’s A2A push config and listen follow it', async () => {
    const trigger = (await alice('POST', 'triggers', { name: 'issues', kind: 'github', request: 'Triage {{payload.title}}', notify_url: `${receiver.url}trigger` })).body;
    const held = gate();
    ollama.enqueue({ content: 'Triaged.', heldUntil: held.opened, promptEvalCount: 3, evalCount: 3 });
    // As GitHub signs a delivery (docs.github.com, "Validating webhook deliveries").
    const body = JSON.stringify({ title: 'CI is red' });
    const reply = await fetch(`${stack.base}${trigger.path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Hub-Signature-256': `sha256=${createHmac('sha256', trigger.secret).update(body).digest('hex')}`,
        'X-GitHub-Event': 'issues',
        'X-GitHub-Delivery': randomUUID(),
      },
      body,
    });
    expect(reply.status).toBe(202);
    const { task_id: taskId } = (await reply.json()) as { task_id: string };
    await followed(taskId, held, '/trigger-a2a');
    const told = await delivered('/trigger', (posted) => JSON.parse(posted).task_id === taskId);
    expect(JSON.parse(told.body)).toMatchObject({
      type: 'task.ended',
      source: { kind: 'trigger', id: trigger.id, name: 'issues' },
      owner: 'alice@example.com',
      status: 'completed',
    });
    expectSigned(told, trigger.notify_secret);
  });
});
