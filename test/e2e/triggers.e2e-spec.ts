import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { adminApi } from '../support/automation-api.js';
import { count, probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { pollUntil } from '../support/poll.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';

const ALICE = as('alice@example.com');
type Created = { id: string; path: string; secret: string };
type Answer = { run_id: string; task_id: string | null; replay: boolean; state: string };

/** Issue 38: POST /v1/triggers/:id with GitHub and Standard Webhooks signatures, as their senders sign them. */
describe('triggers: signed deliveries start one Task each', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, triggers: { max_body_bytes: 4096, rate_per_minute: 5 } } });
  const { ollama } = stack;
  let alice: ReturnType<typeof adminApi>;
  let github: Created;
  let standard: Created;

  const post = (trigger: Created, body: string, headers: Record<string, string>) =>
    fetch(`${stack.base}${trigger.path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
  /** What GitHub sends (docs.github.com, "Validating webhook deliveries"): the hex HMAC-SHA256 of the raw body. */
  const githubHeaders = (secret: string, body: string, delivery: string, event = 'issues') => ({
    'X-Hub-Signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    'X-GitHub-Event': event,
    'X-GitHub-Delivery': delivery,
    'User-Agent': 'GitHub-Hookshot/abc123',
  });
  /** What a Standard Webhooks sender sends, signed by the reference library. */
  const standardHeaders = (secret: string, body: string, id: string, at = new Date()) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  });
  const tasks = () => count(stack.database, 'tasks');
  const rejections = async () => Number((await probe<{ n: number | string }>(stack.database, "SELECT COUNT(*) AS n FROM audit_events WHERE action = 'trigger.rejected'"))[0].n);

  beforeAll(async () => {
    alice = adminApi(stack.base, ALICE);
    ollama.setFallback({ content: 'Triaged.', promptEvalCount: 3, evalCount: 3 });
    github = (
      await alice('POST', 'triggers', {
        name: 'issues',
        kind: 'github',
        request: 'Triage {{event}}: "{{payload.issue.title}}" by {{payload.sender.login}}{{payload.nowhere.at.all}}.',
      })
    ).body;
    standard = (await alice('POST', 'triggers', { name: 'billing', kind: 'standard', request: 'Handle {{event}} for {{payload.data.customer}}' })).body;
    expect(github.secret.length).toBeGreaterThanOrEqual(32);
    expect(standard.secret).toMatch(/^whsec_/);
    expect(github.path).toBe(`/v1/triggers/${github.id}`);
  });

  it('a GitHub-signed delivery starts one Task with the rendered request and the event under inputs/; a replay starts none', async () => {
    const body = JSON.stringify({ action: 'opened', issue: { title: 'CI is red' }, sender: { login: 'octocat' } });
    const delivery = randomUUID();
    const before = await tasks();
    const first = await post(github, body, githubHeaders(github.secret, body, delivery));
    expect(first.status).toBe(202);
    const answer = (await first.json()) as Answer;
    expect(answer).toMatchObject({ state: 'started', replay: false });
    const chat = await pollUntil(async () => ollama.workChats.find((c) => JSON.stringify(c.body.messages).includes('CI is red')), 'the Task reached the model');
    const asked = chat.body.messages.filter((m: { role: string }) => m.role === 'user').at(-1)?.content;
    // A field the event lacks renders empty; the event is a file of the session workspace.
    expect(asked).toMatch(/^Triage issues: "CI is red" by octocat\.\n/);
    expect(asked).toContain(`inputs/issues-${delivery}.json`);
    const replay = await post(github, body, githubHeaders(github.secret, body, delivery));
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ task_id: answer.task_id, replay: true });
    expect(await tasks()).toBe(before + 1);
    const [row] = await probe<{ owner: string; surface: string }>(stack.database, 'SELECT owner, surface FROM tasks WHERE id = ?', answer.task_id);
    expect(row).toEqual({ owner: 'alice@example.com', surface: 'trigger' });
    type RunView = { task_id: string; delivery_id: string; event: string; task_status: string | null; result_first_line: string | null };
    const runs = (await alice<{ runs: RunView[] }>('GET', `triggers/${github.id}/runs`)).body.runs;
    expect(runs).toEqual([expect.objectContaining({ task_id: answer.task_id, delivery_id: delivery, event: 'issues' })]);
    // The runs page shows the Task's status and the first line of its result, as the queue holds them.
    const ended = await pollUntil(async () => {
      const [run] = (await alice<{ runs: RunView[] }>('GET', `triggers/${github.id}/runs`)).body.runs;
      return run.task_status === 'completed' ? run : undefined;
    }, "the runs page shows the Task's end");
    const [task] = await probe<{ result: string }>(stack.database, 'SELECT result FROM tasks WHERE id = ?', answer.task_id);
    expect(ended.result_first_line).toBe(task.result.split('\n').find((line) => line.trim() !== ''));
  });

  it('a Standard-Webhooks-signed delivery starts one Task; a replay starts none', async () => {
    const body = JSON.stringify({ type: 'invoice.paid', data: { customer: 'ACME' } });
    const id = `msg_${randomUUID()}`;
    const before = await tasks();
    const first = await post(standard, body, standardHeaders(standard.secret, body, id));
    expect(first.status).toBe(202);
    const answer = (await first.json()) as Answer;
    await pollUntil(async () => ollama.workChats.find((c) => JSON.stringify(c.body.messages).includes('Handle invoice.paid for ACME')), 'the Task reached the model');
    const replay = await post(standard, body, standardHeaders(standard.secret, body, id));
    expect(replay.status).toBe(200);
    expect(await replay.json()).toMatchObject({ task_id: answer.task_id, replay: true });
    expect(await tasks()).toBe(before + 1);
  });

  it('session continue: every delivery continues the session the first one made', async () => {
    const continuing: Created = (await alice('POST', 'triggers', { name: 'thread', kind: 'github', session: 'continue', request: 'Follow up {{payload.n}}' })).body;
    const taskIds: string[] = [];
    for (const n of [1, 2]) {
      const body = JSON.stringify({ n });
      const reply = await post(continuing, body, githubHeaders(continuing.secret, body, `delivery-${n}-${randomUUID()}`));
      expect(reply.status).toBe(202);
      const taskId = ((await reply.json()) as Answer).task_id!;
      taskIds.push(taskId);
      await pollUntil(async () => {
        const [row] = await probe<{ status: string }>(stack.database, 'SELECT status FROM tasks WHERE id = ?', taskId);
        return ['completed', 'failed'].includes(row.status) || undefined;
      }, `task ${n} ended`);
    }
    const rows = await probe<{ session_id: string }>(stack.database, 'SELECT session_id FROM tasks WHERE id IN (?, ?)', ...taskIds);
    expect(new Set(rows.map((row) => row.session_id)).size).toBe(1);
    const [kept] = await probe<{ session_id: string }>(stack.database, 'SELECT session_id FROM triggers WHERE id = ?', continuing.id);
    expect(kept.session_id).toBe(rows[0].session_id);
  });

  it('a missing or bad signature, or a stale timestamp, is 401, audited, and starts nothing', async () => {
    const body = JSON.stringify({ issue: { title: 'x' } });
    const before = await tasks();
    const audited = await rejections();
    const bad = [
      post(github, body, { ...githubHeaders('not the secret', body, randomUUID()) }),
      post(github, body, { 'X-GitHub-Event': 'issues', 'X-GitHub-Delivery': randomUUID() }),
      post(github, body, githubHeaders(github.secret, `${body} `, randomUUID())),
      post(standard, body, standardHeaders('whsec_' + Buffer.from('another key of 24 bytes!').toString('base64'), body, `msg_${randomUUID()}`)),
      post(standard, body, standardHeaders(standard.secret, body, `msg_${randomUUID()}`, new Date(Date.now() - 10 * 60_000))),
    ];
    for (const reply of await Promise.all(bad)) {
      expect(reply.status).toBe(401);
      expect(await reply.text()).not.toContain('"issue"');
    }
    expect(await tasks()).toBe(before);
    expect(await rejections()).toBe(audited + bad.length);
  });

  it('a signed body that is not JSON is 400 for either kind, audited, and starts nothing', async () => {
    const form = 'payload=%7B%7D';
    const before = await tasks();
    const audited = await rejections();
    const replies = [
      await post(github, form, githubHeaders(github.secret, form, randomUUID())),
      await post(standard, form, standardHeaders(standard.secret, form, `msg_${randomUUID()}`)),
    ];
    for (const reply of replies) {
      expect(reply.status).toBe(400);
      expect(await reply.json()).toEqual({ error: 'the body is not JSON' });
    }
    expect(await tasks()).toBe(before);
    expect(await rejections()).toBe(audited + 2);
  });

  it('a signed body nested deeper than any JSON surface takes is 400, audited, and starts nothing', async () => {
    // A template's field renders as JSON (recursive): past a few thousand levels that overflows the stack.
    const deep = `{"a":${'['.repeat(65)}${']'.repeat(65)}}`;
    const before = await tasks();
    const audited = await rejections();
    const reply = await post(github, deep, githubHeaders(github.secret, deep, randomUUID()));
    expect(reply.status).toBe(400);
    expect(await reply.json()).toEqual({ error: 'the body nests deeper than 64 levels' });
    expect(await tasks()).toBe(before);
    expect(await rejections()).toBe(audited + 1);
  });

  it('an oversized body is 413 before it is read, an unknown trigger 404, and signed deliveries past the rate 429 with Retry-After', async () => {
    const limited: Created = (await alice('POST', 'triggers', { name: 'limited', kind: 'github', request: 'r' })).body;
    const big = JSON.stringify({ blob: 'x'.repeat(8192) });
    const tooLarge = await post(limited, big, githubHeaders(limited.secret, big, randomUUID()));
    expect(tooLarge.status).toBe(413);
    expect((await post({ ...limited, path: `/v1/triggers/${randomUUID()}` }, '{}', {})).status).toBe(404);
    expect((await post({ ...limited, path: '/v1/triggers/not-a-uuid' }, '{}', {})).status).toBe(404);
    // rate_per_minute 5 counts signed deliveries only (ADR 0039): four bad signatures spend none of it.
    const statuses: number[] = [];
    for (let n = 0; n < 4; n++) statuses.push((await post(limited, '{}', {})).status);
    for (let n = 0; n < 5; n++) statuses.push((await post(limited, '{}', githubHeaders(limited.secret, '{}', randomUUID()))).status);
    const before = await tasks();
    const audited = await rejections();
    const limitedReply = await post(limited, '{}', githubHeaders(limited.secret, '{}', randomUUID()));
    expect([...statuses, limitedReply.status]).toEqual([401, 401, 401, 401, 202, 202, 202, 202, 202, 429]);
    expect(await tasks()).toBe(before);
    expect(await rejections()).toBe(audited + 1);
    expect(Number(limitedReply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('another user sees no trigger of alice’s and cannot change it; its secret is never shown again', async () => {
    const bob = adminApi(stack.base, as('bob@example.com'));
    expect((await bob('GET', `triggers/${github.id}`)).status).toBe(404);
    expect((await bob('PATCH', `triggers/${github.id}`, { enabled: false })).status).toBe(404);
    expect((await bob('DELETE', `triggers/${github.id}`)).status).toBe(404);
    expect((await bob('GET', `triggers/${github.id}/runs`)).status).toBe(404);
    const read = await alice('GET', `triggers/${github.id}`);
    expect(JSON.stringify(read.body)).not.toContain(github.secret);
    expect((await alice('PATCH', `triggers/${github.id}`, { enabled: false })).body.enabled).toBe(false);
    // Every call is audited with who made it and what came of it: bob's as errors, alice's change as done.
    const events = await probe<{ actor: string; action: string; outcome: string }>(
      stack.database,
      "SELECT actor, action, outcome FROM audit_events WHERE action LIKE 'trigger.%' AND detail LIKE ? ORDER BY seq",
      `%${github.id}%`,
    );
    const bobs = events.filter((event) => event.actor === 'bob@example.com').map(({ action, outcome }) => [action, outcome]);
    expect(bobs).toEqual([
      ['trigger.read', 'error'],
      ['trigger.update', 'error'],
      ['trigger.delete', 'error'],
      ['trigger.runs', 'error'],
    ]);
    expect(events.filter((event) => event.actor === 'alice@example.com').at(-1)).toEqual({ actor: 'alice@example.com', action: 'trigger.update', outcome: 'ok' });
    const body = '{}';
    expect((await post(github, body, githubHeaders(github.secret, body, randomUUID()))).status).toBe(404);
  });
});
