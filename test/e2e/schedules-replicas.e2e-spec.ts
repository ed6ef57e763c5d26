import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, randomUUID } from 'node:crypto';
import { adminApi } from '../support/automation-api.js';
import { probe } from '../support/database-probe.js';
import { E2E_DATABASE } from '../support/databases.js';
import { useStack } from '../support/e2e-stack.js';
import { pollUntil } from '../support/poll.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';

// Replicas share a PostgreSQL database; this suite runs in the PostgreSQL pass of `npm test`.
const describeOnPostgres = E2E_DATABASE === 'postgres' ? describe : describe.skip;

/** Issue 38: every replica ticks and tries every fire; the database's key on (schedule, fire time) lets one through. */
describeOnPostgres('schedules and triggers on three replicas: one Task per fire, one rate per trigger', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, scheduler: { tick_ms: 100 }, triggers: { rate_per_minute: 4 } } });
  const replicas: string[] = [];

  beforeAll(async () => {
    const origin = async () => new URL((await stack.startAnotherService()).url).origin;
    replicas.push(stack.base, await origin(), await origin());
    stack.ollama.setFallback({ content: 'ok', promptEvalCount: 1, evalCount: 1 });
  }, 120_000);

  it('makes one Task per fire whichever replica sees it first, and every Task has its run', async () => {
    const alice = adminApi(stack.base, as('alice@example.com'));
    const { id } = (await alice<{ id: string }>('POST', 'schedules', { name: 'busy', cron: '* * * * * *', request: 'tick' })).body;
    type Run = { fire_at: string; state: string; task_id: string | null };
    const runs = await pollUntil(
      async () => {
        const page = (await alice<{ runs: Run[] }>('GET', `schedules/${id}/runs?limit=200`)).body.runs;
        return page.filter((run) => run.state === 'started').length >= 6 ? page : undefined;
      },
      'six started fires',
      { timeoutMs: 30_000 },
    );
    await alice('PATCH', `schedules/${id}`, { enabled: false });
    const tasks = await probe<{ id: string }>(stack.database, 'SELECT id FROM tasks WHERE client = ?', `schedule/${id}`);
    const rows = await probe<{ fire_at: string; task_id: string | null }>(stack.database, 'SELECT fire_at, task_id FROM schedule_runs WHERE schedule_id = ?', id);
    // Each Task is the Task of exactly one run, and each fire time has one run.
    expect(new Set(rows.map((row) => row.fire_at)).size).toBe(rows.length);
    expect(tasks.map((task) => task.id).sort()).toEqual(rows.flatMap((row) => (row.task_id ? [row.task_id] : [])).sort());
    expect(runs.length).toBeGreaterThanOrEqual(6);
  });

  it('holds a trigger’s rate across the replicas: of eight signed deliveries spread over three, four are taken', async () => {
    const alice = adminApi(stack.base, as('alice@example.com'));
    const trigger = (await alice<{ id: string; path: string; secret: string }>('POST', 'triggers', { name: 'hooks', kind: 'github', request: 'Triage {{event}}' })).body;
    const deliver = (base: string) => {
      // As GitHub signs a delivery (docs.github.com, "Validating webhook deliveries").
      const body = JSON.stringify({ action: 'opened' });
      return fetch(`${base}${trigger.path}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-Hub-Signature-256': `sha256=${createHmac('sha256', trigger.secret).update(body).digest('hex')}`,
          'X-GitHub-Event': 'issues',
          'X-GitHub-Delivery': randomUUID(),
        },
        body,
      });
    };
    const replies = await Promise.all(Array.from({ length: 8 }, (_, n) => deliver(replicas[n % replicas.length])));
    const statuses = replies.map((reply) => reply.status).sort();
    expect(statuses).toEqual([202, 202, 202, 202, 429, 429, 429, 429]);
    for (const reply of replies.filter((r) => r.status === 429)) expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const runs = await probe<{ id: string }>(stack.database, 'SELECT id FROM trigger_runs WHERE trigger_id = ?', trigger.id);
    expect(runs).toHaveLength(4);
    const tasks = await probe<{ id: string }>(stack.database, 'SELECT id FROM tasks WHERE client = ?', `trigger/${trigger.id}`);
    expect(tasks).toHaveLength(4);
  });
});
