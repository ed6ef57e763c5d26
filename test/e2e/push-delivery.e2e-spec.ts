import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Task } from '@a2a-js/sdk';
import { ClientFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { userInfo } from 'node:os';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { pollUntil } from '../support/poll.js';
import { fieldsOf, textOf } from '../support/mcp-clients.js';
import type { ServiceProcess } from '../support/service-process.js';
import { gate } from '../support/gate.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A local push receiver: records every request; answers 500 to the first request of each path, 200 after. */
class Receiver {
  readonly received: Received[] = [];
  /** Paths that answer 500 to every request while listed. */
  readonly failing = new Set<string>();
  private server: Server | null = null;

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '';
        const status = this.failing.has(path) || !this.received.some((entry) => entry.path === path) ? 500 : 200;
        this.received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async until(predicate: (entries: Received[]) => boolean, timeoutMs = 10_000): Promise<void> {
    await pollUntil(async () => predicate(this.received) || undefined, 'receiver: the requests awaited', {
      timeoutMs,
      everyMs: 25,
      lastSeen: () => JSON.stringify(this.received.map((entry) => [entry.path, entry.status])),
    });
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

const SECRET = 'webhook-secret-of-the-tests';

/** The audit outcomes of `action` for the Task, once the last is `ok` (an attempt is audited after its answer came back). */
async function auditedUntilOk(db: DatabaseTarget, action: string, taskId: string): Promise<string[]> {
  let outcomes: string[] = [];
  return pollUntil(
    async () => {
      outcomes = (await probe<{ outcome: string }>(db, 'SELECT outcome FROM audit_events WHERE action = ? AND task_id = ? ORDER BY seq', action, taskId)).map((row) => row.outcome);
      return outcomes.at(-1) === 'ok' ? outcomes : undefined;
    },
    `an ok ${action} of task ${taskId}`,
    { everyMs: 25, lastSeen: () => outcomes.join(', ') },
  );
}

describe('outgoing pushes: A2A push notifications and webhooks (issue 23)', () => {
  const receiver = new Receiver();
  // Started before the stack, whose config names its URL.
  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());
  const stack = useStack({
    config: () => ({
      // The receiver is listed by its IP literal (so its loopback address is allowed); `http://` lets any
      // other http URL through the allowlist, where the address guard must stop private targets.
      a2a: { push: { allowed_urls: [`${receiver.url}/`, 'http://'], retry_for_ms: 20_000 } },
      webhooks: [{ url: `${receiver.url}/webhook`, secret: SECRET, owners: [userInfo().username], groups: [] }],
    }),
  });
  const { ollama } = stack;
  let service: ServiceProcess;
  let base: string;
  let a2a: A2aClient;
  let db: DatabaseTarget;

  beforeAll(async () => {
    ({ service, base, database: db } = stack);
    a2a = await new ClientFactory().createFromUrl(base);
  });

  const submit = async (request: string) => (await a2a.sendMessage(a2aSend([a2aText(request)], { returnImmediately: true }))) as Task;
  const pushConfig = (taskId: string, url: string, token = '') => ({ tenant: '', id: '', taskId, url, token, authentication: undefined });

  it('says pushNotifications: true on the card, with the JWKS push JWTs verify against', async () => {
    const card = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
    expect(card.capabilities).toMatchObject({
      pushNotifications: true,
      extensions: [{ uri: 'urn:ollama-agent-mcp:a2a-push-jwks', params: { jwks_url: `${base}/.well-known/jwks.json` } }],
    });
    const jwks = await (await fetch(`${base}/.well-known/jwks.json`)).json();
    expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'EC', alg: 'ES256', kid: expect.any(String) })]);
    expect(JSON.stringify(jwks)).not.toMatch(/"d"/);
  });

  it('delivers the ended Task to a local receiver, signed, retried after one 500; every attempt audited', async () => {
    const configured = gate();
    ollama.enqueue({ content: 'pushed answer', heldUntil: configured.opened });
    const task = await submit('push me');
    const url = `${receiver.url}/a2a-hook`;
    const created = await a2a.createTaskPushNotificationConfig(pushConfig(task.id, url, 'client-token')).finally(configured.open);
    expect(created).toMatchObject({ taskId: task.id, url, id: expect.any(String) });
    expect(await a2a.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 10, pageToken: '' })).toMatchObject({ configs: [{ id: created.id, url }] });
    expect(await a2a.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id })).toMatchObject({ id: created.id, url, token: 'client-token' });
    await receiver.until((entries) => entries.some((entry) => entry.path === '/a2a-hook' && entry.status === 200 && entry.body.includes('TASK_STATE_COMPLETED')));
    const hooks = receiver.received.filter((entry) => entry.path === '/a2a-hook');
    expect(hooks[0].status).toBe(500);
    const delivered = hooks.find((entry) => entry.status === 200 && entry.body.includes('TASK_STATE_COMPLETED'))!;
    // The retry is the same delivery, sent again.
    expect(hooks.filter((entry) => entry.headers['x-a2a-delivery'] === delivered.headers['x-a2a-delivery']).length).toBeGreaterThanOrEqual(1);
    expect(delivered.headers['content-type']).toBe('application/a2a+json');
    expect(delivered.headers['x-a2a-notification-token']).toBe('client-token');
    expect(JSON.parse(delivered.body)).toMatchObject({ task: { id: task.id, status: { state: 'TASK_STATE_COMPLETED' } } });
    const jwt = String(delivered.headers.authorization).replace(/^Bearer /, '');
    const keys = createLocalJWKSet(await (await fetch(`${base}/.well-known/jwks.json`)).json());
    const { payload } = await jwtVerify(jwt, keys, { audience: url, issuer: `${base}/a2a` });
    expect(payload).toMatchObject({ task_id: task.id, request_body_sha256: createHash('sha256').update(delivered.body).digest('hex') });
    const audited = await auditedUntilOk(db, 'a2a.push', task.id);
    expect(audited).toContain('error');
    expect(audited.at(-1)).toBe('ok');
  });

  it('refuses a URL outside the allowlist and the metadata address http://169.254.169.254/, storing nothing', async () => {
    // The Task runs until its configs were tried (refused, and one stored then deleted).
    const tried = gate();
    ollama.enqueue({ content: 'x', heldUntil: tried.opened });
    const task = await submit('refuse pushes');
    try {
      await expect(a2a.createTaskPushNotificationConfig(pushConfig(task.id, 'https://example.com/hook'))).rejects.toThrow(/not under a2a.push.allowed_urls/);
      await expect(a2a.createTaskPushNotificationConfig(pushConfig(task.id, 'http://169.254.169.254/latest/meta-data'))).rejects.toThrow(
        /link-local or private address \(169\.254\.169\.254\)/,
      );
      await expect(a2a.createTaskPushNotificationConfig(pushConfig(task.id, 'http://[::ffff:127.0.0.1]:9/'))).rejects.toThrow(/private address/);
      expect(await probe(db, 'SELECT * FROM a2a_push_configs WHERE task_id = ?', task.id)).toEqual([]);
      // Delete takes back a config; another's Task (here: a made-up id) is not found.
      const kept = await a2a.createTaskPushNotificationConfig(pushConfig(task.id, `${receiver.url}/deleted`));
      await a2a.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: kept.id });
      expect(await probe(db, 'SELECT * FROM a2a_push_configs WHERE task_id = ?', task.id)).toEqual([]);
    } finally {
      tried.open();
    }
    await expect(a2a.createTaskPushNotificationConfig(pushConfig('00000000-0000-4000-8000-000000000000', `${receiver.url}/x`))).rejects.toThrow(/not found/i);
    const refused = await probe<{ outcome: string }>(
      db,
      "SELECT outcome FROM audit_events WHERE action = 'a2a CreateTaskPushNotificationConfig' AND detail LIKE '%169.254.169.254%'",
    );
    expect(refused.map((row) => row.outcome)).toEqual(['rejected']);
  });

  it('never connects to a name that resolves to loopback unless its address is listed (checked at connect time)', async () => {
    const configured = gate();
    ollama.enqueue({ content: 'y', heldUntil: configured.opened });
    const task = await submit('resolve me');
    const port = new URL(receiver.url).port;
    await a2a.createTaskPushNotificationConfig(pushConfig(task.id, `http://localhost:${port}/by-name`)).finally(configured.open);
    const rows = await pollUntil(
      async () => {
        const audited = await probe<{ outcome: string; detail: string }>(db, "SELECT outcome, detail FROM audit_events WHERE action = 'a2a.push' AND task_id = ?", task.id);
        return audited.length > 0 ? audited : undefined;
      },
      'an audited push attempt',
      { timeoutMs: 10_000, everyMs: 50 },
    );
    expect(rows[0].outcome).toBe('rejected');
    expect(rows[0].detail).toMatch(/resolves only to loopback, link-local or private addresses/);
    expect(receiver.received.some((entry) => entry.path === '/by-name')).toBe(false);
  });

  it('webhooks: a signed task.ended event for a listed owner, from any surface (here MCP), retried after one 500', async () => {
    ollama.enqueue({ content: 'webhook answer' });
    // Every Task here is the listed owner's: this one's first attempt is made to fail.
    receiver.failing.add('/webhook');
    const mcp = await stack.mcpClient();
    const taskId = fieldsOf(textOf(await mcp.callTool({ name: 'agent_run', arguments: { request: 'tell the webhook' } }))).task_id;
    await receiver.until((entries) => entries.some((entry) => entry.path === '/webhook' && entry.body.includes(taskId)));
    receiver.failing.delete('/webhook');
    await receiver.until((entries) => entries.some((entry) => entry.path === '/webhook' && entry.status === 200 && entry.body.includes(taskId)));
    const hooks = receiver.received.filter((entry) => entry.path === '/webhook' && entry.body.includes(taskId));
    const delivered = hooks.at(-1)!;
    expect(hooks[0].status).toBe(500);
    expect(delivered.status).toBe(200);
    expect(JSON.parse(delivered.body)).toMatchObject({ type: 'task.ended', task_id: taskId, status: 'completed', result: 'webhook answer', owner: userInfo().username });
    const [, time, mac] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(delivered.headers['x-oam-signature']))!;
    expect(mac).toBe(createHmac('sha256', SECRET).update(`${time}.${delivered.body}`).digest('hex'));
    expect(await auditedUntilOk(db, 'webhook.delivery', taskId)).toEqual(['error', 'ok']);
  });

  it('survives a restart: a delivery still failing when the service stops is finished by the next start', async () => {
    receiver.failing.add('/restart');
    const configured = gate();
    ollama.enqueue({ content: 'restart answer', heldUntil: configured.opened });
    const task = await submit('deliver after a restart');
    await a2a.createTaskPushNotificationConfig(pushConfig(task.id, `${receiver.url}/restart`)).finally(configured.open);
    await receiver.until((entries) => entries.some((entry) => entry.path === '/restart' && entry.body.includes('TASK_STATE_COMPLETED')));
    await service.stop();
    receiver.failing.delete('/restart');
    const [pending] = await probe<{ state: string }>(db, "SELECT state FROM push_deliveries WHERE task_id = ? AND payload LIKE '%TASK_STATE_COMPLETED%'", task.id);
    expect(pending.state).toBe('pending');
    await service.start();
    await receiver.until((entries) => entries.some((entry) => entry.path === '/restart' && entry.status === 200 && entry.body.includes('TASK_STATE_COMPLETED')));
    const done = await pollUntil(
      async () => {
        const [row] = await probe<{ state: string; attempts: number }>(
          db,
          "SELECT state, attempts FROM push_deliveries WHERE task_id = ? AND payload LIKE '%TASK_STATE_COMPLETED%'",
          task.id,
        );
        return row?.state === 'delivered' ? row : undefined;
      },
      'the delivery marked delivered',
      { everyMs: 20 },
    );
    expect(done.state).toBe('delivered');
    expect(Number(done.attempts)).toBeGreaterThanOrEqual(2);
  });
});
