import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { createHmac } from 'node:crypto';
import { adminApi, webhookReceiver } from '../support/automation-api.js';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, modernClient, textOf } from '../support/mcp-clients.js';
import { pollUntil } from '../support/poll.js';
import { ADMIN, as, PROXY_AUTH } from '../support/proxy-identity.js';

const ALICE = as('alice@example.com');
const BOB = as('bob@example.com');
type Run = {
  id: string;
  task_id: string | null;
  task_status: string | null;
  state: string;
  skipped: boolean;
  kind: string;
  reason: string | null;
  result_first_line: string | null;
};

/** Issue 38: schedules over the admin REST API, fired by the service's own clock (six-field cron, every second). */
describe('schedules: cron fires, history, pause, run now, overlap, ownership, unattended approvals', () => {
  let receiver: Awaited<ReturnType<typeof webhookReceiver>>;
  const stack = useStack({
    config: async () => {
      receiver = await webhookReceiver();
      return {
        auth: PROXY_AUTH,
        agent: { approvals: { mode: 'commands' } },
        // Fires count toward their owner's queue limit (the queue-limit test below).
        queue: { max_queued_per_user: 2 },
        a2a: { push: { allowed_urls: [receiver.url] } },
        // A fire more than a second late was missed (the outage test below).
        scheduler: { tick_ms: 200, misfire_grace_ms: 1000 },
        // Declared by the operator, run as its owner.
        schedules: [
          {
            name: 'nightly report',
            owner: 'alice@example.com',
            groups: ['dev'],
            cron: '0 3 * * *',
            timezone: 'Europe/Berlin',
            request: 'Write the nightly report',
            catch_up: 'last',
          },
        ],
      };
    },
  });
  const { ollama } = stack;
  let alice: ReturnType<typeof adminApi>;
  let bob: ReturnType<typeof adminApi>;
  let admin: ReturnType<typeof adminApi>;
  let aliceMcp: Client;

  const runsOf = async (id: string) => (await alice<{ runs: Run[] }>('GET', `schedules/${id}/runs?limit=200`)).body.runs;
  const make = async (body: Record<string, unknown>) => {
    const reply = await alice('POST', 'schedules', { request: 'Summarise the overnight CI logs', ...body });
    expect(reply.status).toBe(201);
    return reply.body as { id: string; notify_secret: string | null; next_fire_at: string | null };
  };
  /** Nothing of anyone's is queued or running: the next scripted reply goes to the next Task made. */
  const idle = () =>
    pollUntil(async () => {
      const [row] = await probe<{ n: number | string }>(stack.database, "SELECT COUNT(*) AS n FROM tasks WHERE status IN ('queued', 'planning', 'running')");
      return Number(row.n) === 0 ? true : undefined;
    }, 'no task queued or running');

  beforeAll(async () => {
    alice = adminApi(stack.base, ALICE);
    bob = adminApi(stack.base, BOB);
    admin = adminApi(stack.base, ADMIN);
    aliceMcp = stack.closeOnStop(await modernClient(stack.service.url, ALICE));
    ollama.setFallback({ content: 'All green.\nNothing broke overnight.', promptEvalCount: 3, evalCount: 3 });
  });
  afterAll(() => receiver.close());

  let every: string;

  it('fires a six-field cron repeatedly, each fire an ordinary Task of the owner listed in the history', async () => {
    every = (await make({ name: 'every second', cron: '* * * * * *' })).id;
    const runs = await pollUntil(async () => {
      const started = (await runsOf(every)).filter((run) => run.state === 'started' && run.task_status === 'completed');
      return started.length >= 2 ? started : undefined;
    }, 'two completed fires');
    expect(new Set(runs.map((run) => run.task_id)).size).toBe(runs.length);
    expect(runs[0]).toMatchObject({ kind: 'cron', skipped: false, result_first_line: 'All green.' });
    // An ordinary Task: agent_status of its owner reads it; its row says the schedule made it.
    const status = fieldsOf(textOf(await aliceMcp.callTool({ name: 'agent_status', arguments: { task_id: runs[0].task_id } })));
    expect(status.status).toBe('completed');
    const [task] = await probe<{ owner: string; surface: string; client: string }>(stack.database, 'SELECT owner, surface, client FROM tasks WHERE id = ?', runs[0].task_id);
    expect(task).toEqual({ owner: 'alice@example.com', surface: 'schedule', client: `schedule/${every}` });
    // The admin API says which schedule made it.
    const { body: tasks } = await alice<{ items: { task_id: string; started_by: string | null }[] }>('GET', 'tasks?surface=schedule&limit=200');
    const listed = tasks.items.filter((item) => runs.some((run) => run.task_id === item.task_id));
    expect(listed.map((item) => item.started_by)).toEqual(runs.map(() => `schedule/${every}`));
  });

  it('pause stops it and run now fires it once; another schedule keeps firing meanwhile', async () => {
    const paused = await alice('PATCH', `schedules/${every}`, { enabled: false });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ enabled: false, next_fire_at: null });
    await idle();
    const before = (await runsOf(every)).length;
    const now = await alice<Run>('POST', `schedules/${every}/run`);
    expect(now.status).toBe(200);
    expect(now.body).toMatchObject({ kind: 'manual', state: 'started', skipped: false });
    // A clock to watch: a second schedule fires three more times while the first stays paused.
    const clock = (await make({ name: 'clock', cron: '* * * * * *' })).id;
    await pollUntil(async () => ((await runsOf(clock)).length >= 3 ? true : undefined), 'three fires of the clock schedule');
    expect((await runsOf(every)).length).toBe(before + 1);
    expect((await alice('DELETE', `schedules/${clock}`)).status).toBe(200);
    expect((await alice('GET', `schedules/${clock}`)).status).toBe(404);
    // Resumed: it fires again from now on.
    expect((await alice('PATCH', `schedules/${every}`, { enabled: true })).body.next_fire_at).not.toBeNull();
    await pollUntil(async () => ((await runsOf(every)).length > before + 1 ? true : undefined), 'a fire after resuming');
    await alice('PATCH', `schedules/${every}`, { enabled: false });
  });

  it('skips a fire while the last Task is still running, and records it as skipped', async () => {
    await idle();
    let release!: () => void;
    ollama.enqueue({ content: 'slow', heldUntil: new Promise<void>((resolve) => (release = resolve)) });
    const slow = (await make({ name: 'overlapping', cron: '* * * * * *' })).id;
    const skipped = await pollUntil(async () => (await runsOf(slow)).find((run) => run.skipped), 'a skipped fire');
    release();
    expect(skipped).toMatchObject({ state: 'skipped', task_id: null, reason: expect.stringContaining('still queued or running') });
    const started = (await runsOf(slow)).filter((run) => run.state === 'started');
    await alice('PATCH', `schedules/${slow}`, { enabled: false });
    expect(started.length).toBeGreaterThanOrEqual(1);
    const [audited] = await probe<{ n: number | string }>(stack.database, "SELECT COUNT(*) AS n FROM audit_events WHERE action = 'schedule.skipped'");
    expect(Number(audited.n)).toBeGreaterThanOrEqual(1);
  });

  it('counts fires toward the owner’s queue limit: one past it is refused and recorded with the reason', async () => {
    await idle();
    let release!: () => void;
    ollama.enqueue({ content: 'busy', heldUntil: new Promise<void>((resolve) => (release = resolve)) });
    const ids = [];
    for (const name of ['q1', 'q2', 'q3', 'q4']) ids.push((await make({ name, cron: '0 0 1 1 *' })).id);
    // q1 runs (held), q2 and q3 wait: alice has two Tasks queued, the most she may.
    const runs: Run[] = [];
    for (const id of ids) {
      runs.push((await alice<Run>('POST', `schedules/${id}/run`)).body);
      if (runs.length === 1) await pollUntil(async () => ((await runsOf(id))[0].task_status === 'running' ? true : undefined), 'the first Task running');
    }
    release();
    expect(runs.map((run) => run.state)).toEqual(['started', 'started', 'started', 'refused']);
    expect(runs[3]).toMatchObject({ task_id: null, reason: expect.stringContaining('queue.max_queued_per_user: 2') });
    for (const id of ids) await alice('DELETE', `schedules/${id}`);
  });

  it('another user can neither read nor change it (the answer of an unknown id); an admin sees it', async () => {
    const unknown = await bob('GET', 'schedules/00000000-0000-4000-8000-000000000000');
    for (const [method, path, body] of [
      ['GET', `schedules/${every}`],
      ['PATCH', `schedules/${every}`, { enabled: true }],
      ['DELETE', `schedules/${every}`],
      ['POST', `schedules/${every}/run`],
      ['GET', `schedules/${every}/runs`],
    ] as const) {
      const reply = await bob(method, path, body);
      expect([method, path, reply.status]).toEqual([method, path, 404]);
      expect(reply.body.message.replace(every, 'ID')).toBe(unknown.body.message.replace('00000000-0000-4000-8000-000000000000', 'ID'));
    }
    // Each of bob's tries is audited as his, and as refused.
    const tried = await probe<{ action: string; outcome: string }>(
      stack.database,
      "SELECT action, outcome FROM audit_events WHERE actor = 'bob@example.com' AND action LIKE 'schedule.%' AND detail LIKE ? ORDER BY seq",
      `%${every}%`,
    );
    expect(tried.map(({ action, outcome }) => `${action} ${outcome}`)).toEqual([
      'schedule.read error',
      'schedule.update error',
      'schedule.delete error',
      'schedule.run_now error',
      'schedule.runs error',
    ]);
    expect((await bob<{ schedules: unknown[] }>('GET', 'schedules')).body.schedules).toEqual([]);
    expect((await alice('GET', `schedules/${every}`)).body.enabled).toBe(false);
    expect((await admin<{ schedules: { id: string }[] }>('GET', 'schedules')).body.schedules.map((s) => s.id)).toContain(every);
  });

  it('runs as its owner with the groups of the owner’s latest request, not those it was made with (ADR 0039)', async () => {
    await idle();
    const { id } = await make({ name: 'groups', cron: '0 0 1 1 *' });
    const groupsOf = async () => {
      const run = (await alice<Run>('POST', `schedules/${id}/run`)).body;
      expect(run.state).toBe('started');
      await idle();
      const [task] = await probe<{ owner_groups: string }>(stack.database, 'SELECT owner_groups FROM tasks WHERE id = ?', run.task_id);
      return JSON.parse(task.owner_groups) as string[];
    };
    expect(await groupsOf()).toEqual(['dev']);
    // The identity provider moved alice from dev to ops; the service learns it from her next request.
    const moved = stack.closeOnStop(await modernClient(stack.service.url, as('alice@example.com', 'ops')));
    expect(fieldsOf(textOf(await moved.callTool({ name: 'agent_run', arguments: { request: 'Anything' } }))).task_id).toBeTruthy();
    await idle();
    expect(await groupsOf()).toEqual(['ops']);
    await alice('DELETE', `schedules/${id}`);
  });

  it('session continue: every fire continues the session the first one made, so the agent sees its earlier runs', async () => {
    await idle();
    const { id } = await make({ name: 'diary', cron: '0 0 1 1 *', session: 'continue', request: 'Write today’s diary entry' });
    ollama.enqueue({ content: 'Entry one: quiet day.', promptEvalCount: 3, evalCount: 3 });
    const first = (await alice<Run>('POST', `schedules/${id}/run`)).body;
    await idle();
    const second = (await alice<Run>('POST', `schedules/${id}/run`)).body;
    await idle();
    const sessions = await probe<{ id: string; session_id: string }>(stack.database, 'SELECT id, session_id FROM tasks WHERE id IN (?, ?)', first.task_id, second.task_id);
    expect(new Set(sessions.map((task) => task.session_id)).size).toBe(1);
    const [kept] = await probe<{ session_id: string }>(stack.database, 'SELECT session_id FROM schedules WHERE id = ?', id);
    expect(kept.session_id).toBe(sessions[0].session_id);
    // The second fire's model call carries the first run's answer.
    expect(
      ollama.workChats.some(
        (chat) => JSON.stringify(chat.body.messages).includes('Entry one: quiet day.') && chat.body.messages.filter((m: { role: string }) => m.role === 'user').length >= 2,
      ),
    ).toBe(true);
    await alice('DELETE', `schedules/${id}`);
  });

  it('shows a schedule declared in the configuration to its owner, who may run it but not change it', async () => {
    const { body } = await alice<{ schedules: { id: string; name: string; declared: boolean; catch_up: string; timezone: string; next_fire_at: string }[] }>('GET', 'schedules');
    const nightly = body.schedules.find((schedule) => schedule.name === 'nightly report')!;
    expect(nightly).toMatchObject({ declared: true, catch_up: 'last', timezone: 'Europe/Berlin' });
    // 03:00 in Berlin is 01:00 or 02:00 UTC, by the season.
    expect(nightly.next_fire_at).toMatch(/T0[12]:00:00\.000Z$/);
    expect((await alice('PATCH', `schedules/${nightly.id}`, { enabled: false })).body.message).toMatch(/declared in the configuration/);
    expect((await alice('DELETE', `schedules/${nightly.id}`)).status).toBe(400);
    expect((await bob('GET', `schedules/${nightly.id}`)).status).toBe(404);
  });

  it('refuses a bad cron, a bad time zone, an unknown field or a wrong type with 400 naming it, and stores nothing', async () => {
    const [before] = await probe<{ n: number | string }>(stack.database, 'SELECT COUNT(*) AS n FROM schedules');
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: 'x', cron: '61 * * * *' }, /^cron: .*minute/],
      [{ name: 'x', cron: '* * *' }, /^cron: expected five fields/],
      [{ name: 'x', cron: '* * * * *', timezone: 'Mars/Olympus' }, /^timezone: "Mars\/Olympus" is not an IANA/],
      [{ name: 'x', cron: '* * * * *', tier: 'huge' }, /^tier: /],
      [{ name: 'x', cron: '* * * * *', notify_url: 'http://attacker.example/' }, /^notify_url: must start with one of a2a.push.allowed_urls/],
    ];
    for (const [body, message] of cases) {
      const reply = await alice('POST', 'schedules', { request: 'r', ...body });
      expect([body, reply.status]).toEqual([body, 400]);
      expect(reply.body.message).toMatch(message);
    }
    const unknownField = await alice('POST', 'schedules', { name: 'x', cron: '* * * * *', request: 'r', owner: 'bob@example.com' });
    expect(unknownField.status).toBe(400);
    expect(JSON.stringify(unknownField.body.message)).toMatch(/owner should not exist/);
    const wrongType = await alice('POST', 'schedules', { name: 'x', cron: '* * * * *', request: 'r', enabled: 'yes' });
    expect(wrongType.status).toBe(400);
    // A schedule never approves for a person.
    const approving = await alice('POST', 'schedules', { name: 'x', cron: '* * * * *', request: 'r', approvals: 'approve' });
    expect([approving.status, JSON.stringify(approving.body.message)]).toEqual([400, expect.stringContaining('approvals must be one of the following values: deny, wait')]);
    const notJson = await fetch(`${stack.base}/admin/schedules`, { method: 'POST', headers: { ...ALICE, 'Content-Type': 'application/json' }, body: '{"name":' });
    expect(notJson.status).toBe(400);
    const tooLarge = await alice('POST', 'schedules', { name: 'x', cron: '* * * * *', request: 'r'.repeat(70_000) });
    expect(tooLarge.status).toBe(413);
    const [after] = await probe<{ n: number | string }>(stack.database, 'SELECT COUNT(*) AS n FROM schedules');
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('approvals: wait pauses the Task for its owner and tells the notify webhook, signed; deny tells the agent no', async () => {
    await idle();
    const call = (command: string) => ({ toolCalls: [{ name: 'run_command', arguments: { command } }], promptEvalCount: 5, evalCount: 5 });
    ollama.enqueue(call('rm -rf build'));
    const waiting = await make({ name: 'needs a person', cron: '0 0 1 1 *', approvals: 'wait', notify_url: receiver.url });
    expect(waiting.notify_secret).toMatch(/^[A-Za-z0-9+/]{32}$/);
    const run = (await alice<Run>('POST', `schedules/${waiting.id}/run`)).body;
    const told = await pollUntil(async () => receiver.received.find((post) => JSON.parse(post.body).type === 'task.waiting'), 'the notify webhook told of the wait');
    const payload = JSON.parse(told.body);
    expect(payload).toMatchObject({
      source: { kind: 'schedule', id: waiting.id, name: 'needs a person' },
      task_id: run.task_id,
      owner: 'alice@example.com',
      waiting_for: 'approval',
    });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(told.headers['x-oam-signature']))!;
    expect(v1).toBe(createHmac('sha256', waiting.notify_secret!).update(`${t}.${told.body}`).digest('hex'));
    // The owner sees it waiting on the console's approvals; nothing ran the command.
    const { body: pending } = await alice<{ items: { task_id: string }[] }>('GET', 'approvals');
    expect(pending.items.map((approval) => approval.task_id)).toContain(run.task_id);
    await pollUntil(async () => receiver.received.find((post) => JSON.parse(post.body).type === 'task.ended' && JSON.parse(post.body).task_id === run.task_id), 'the end told too');

    await idle();
    ollama.enqueue(call('rm -rf build'), { content: 'Could not clean up: not allowed.', promptEvalCount: 5, evalCount: 5 });
    const denying = await make({ name: 'never waits', cron: '0 0 1 1 *', approvals: 'deny' });
    const denied = (await alice<Run>('POST', `schedules/${denying.id}/run`)).body;
    await pollUntil(async () => ((await runsOf(denying.id))[0].task_status === 'completed' ? true : undefined), 'the denied Task completed');
    const [approvals] = await probe<{ n: number | string }>(stack.database, 'SELECT COUNT(*) AS n FROM approvals WHERE task_id = ?', denied.task_id);
    expect(Number(approvals.n)).toBe(0);
    const toolResult = ollama.workChats.at(-1)!.body.messages.find((message: { role: string }) => message.role === 'tool');
    expect(toolResult?.content).toMatch(/^Not run: the person refused this action \(reason: nobody watches/);
  });

  it('does not replay a fire missed while no replica ran, unless catch_up is last (then once)', async () => {
    // One fire, eight seconds from now (UTC wall clock); the service is down when it comes and for a while after.
    const fire = new Date(Math.ceil(Date.now() / 1000) * 1000 + 8000);
    const cron = `${fire.getUTCSeconds()} ${fire.getUTCMinutes()} ${fire.getUTCHours()} * * *`;
    const skipped = (await make({ name: 'missed, not replayed', cron })).id;
    const caughtUp = (await make({ name: 'missed, caught up', cron, catch_up: 'last' })).id;
    expect((await alice('GET', `schedules/${skipped}`)).body.next_fire_at).toBe(fire.toISOString());
    await stack.service.stop();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, fire.getTime() + 2500 - Date.now())));
    const back = await stack.startAnotherService();
    const api = adminApi(`http://127.0.0.1:${back.port}`, ALICE);
    const moved = (id: string) =>
      pollUntil(async () => {
        const { body } = await api<{ next_fire_at: string }>('GET', `schedules/${id}`);
        return body.next_fire_at !== fire.toISOString() ? body.next_fire_at : undefined;
      }, `schedule ${id} moved past the missed fire`);
    expect(Date.parse(await moved(skipped))).toBe(fire.getTime() + 86_400_000);
    expect(Date.parse(await moved(caughtUp))).toBe(fire.getTime() + 86_400_000);
    expect((await api<{ runs: Run[] }>('GET', `schedules/${skipped}/runs`)).body.runs).toEqual([]);
    const [late] = (await api<{ runs: (Run & { fire_at: string })[] }>('GET', `schedules/${caughtUp}/runs`)).body.runs;
    expect(late).toMatchObject({ fire_at: fire.toISOString(), kind: 'cron', state: 'started' });
  });
});
