import { afterEach, describe, expect, it } from '@jest/globals';
import { ACCEPTED, buildQueue as build, callerOf, requestOf } from '../support/fakes/queue.js';

/**
 * TaskQueueService at the service level (issue 42): the real queue, worker and execution on in-memory repositories
 * (test/support/fakes), the agent scripted. What the queue owns: who may queue how much, the fair order, one active
 * Task, claim, finish and cancel, and that a refused request stores nothing.
 */
const built: ReturnType<typeof build>[] = [];
const buildQueue = (...args: Parameters<typeof build>) => built[built.push(build(...args)) - 1];
// A run still going at a test's end is interrupted, as at a shutdown: its lease renewal stops with it.
afterEach(async () => {
  for (const queue of built.splice(0)) await queue.queue.shutdown(0);
});

const alice = callerOf('alice');
const bob = callerOf('bob');

describe('TaskQueueService: enqueue', () => {
  it('stores the Task, its new session and its accepting event together, runs it, and ends it with the answer', async () => {
    const { queue, tasks, sessionRows, audit, agent, ended } = buildQueue();
    const task = await queue.enqueue(alice, requestOf('add a README'), ACCEPTED);
    expect(task).toMatchObject({ status: 'queued', owner: 'alice' });
    expect(sessionRows.rows.map((row) => [row.id, row.owner])).toEqual([[task.sessionId, 'alice']]);
    expect(audit.of('tool.agent_run')).toEqual([{ outcome: 'ok', taskId: task.id, detail: { images: [] } }]);
    await agent.started(task.id);
    expect(agent.runs.map((run) => [run.request, run.sessionId, run.history])).toEqual([['add a README', task.sessionId, []]]);
    agent.complete(task.id, 'README added.');
    expect(await ended(task.id)).toMatchObject({ status: 'completed', result: 'README added.' });
    expect((await tasks.findById(task.id))!.status).toBe('completed');
    expect(audit.of('task.status').map((event) => event.detail.status)).toEqual(['planning', 'completed']);
  });

  it("refuses another user's session as a missing one, and stores nothing", async () => {
    const { queue, tasks, audit, agent, ended } = buildQueue();
    const first = await queue.enqueue(alice, requestOf('first'), ACCEPTED);
    await agent.started(first.id);
    agent.complete(first.id, 'done');
    await ended(first.id);
    await expect(queue.enqueue(bob, requestOf('mine now', { sessionId: first.sessionId }), ACCEPTED)).rejects.toMatchObject({ code: 'session_not_found' });
    expect(tasks.rows).toHaveLength(1);
    expect(audit.of('tool.agent_run')).toHaveLength(1);
  });

  it('refuses a user at queue.max_queued_per_user (queue_full) without storing the Task, its session or its event; others still queue', async () => {
    const { queue, tasks, sessionRows, audit, agent } = buildQueue({ queue: { max_queued_per_user: 2 } });
    const running = await queue.enqueue(alice, requestOf('long'), ACCEPTED);
    await agent.started(running.id);
    await queue.enqueue(alice, requestOf('waits 1'), ACCEPTED);
    await queue.enqueue(alice, requestOf('waits 2'), ACCEPTED);
    await expect(queue.enqueue(alice, requestOf('one too many'), ACCEPTED)).rejects.toMatchObject({
      code: 'queue_full',
      message: expect.stringContaining('you already have 2 tasks waiting, the most one user may queue (queue.max_queued_per_user: 2)'),
    });
    expect(tasks.rows.map((row) => row.request)).toEqual(['long', 'waits 1', 'waits 2']);
    expect(sessionRows.rows).toHaveLength(3);
    expect(audit.of('tool.agent_run')).toHaveLength(3);
    await queue.enqueue(bob, requestOf('bob queues'), ACCEPTED);
    expect(await queue.count({ status: 'queued' })).toBe(3);
  });

  it('refuses a user past today’s token quota (quota_exceeded) before anything is stored', async () => {
    const { queue, tasks } = buildQueue({ quotas: { tokens_per_user_day: 1000 } }, (user) => (user === 'alice' ? 1000 : 0));
    await expect(queue.enqueue(alice, requestOf('more'), ACCEPTED)).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect(tasks.rows).toEqual([]);
    await queue.enqueue(bob, requestOf('fine'), ACCEPTED);
    expect(tasks.rows).toHaveLength(1);
  });

  it('after shutdown: a clear shutting_down refusal, nothing stored', async () => {
    const { queue, tasks } = buildQueue();
    await queue.shutdown(0);
    await expect(queue.enqueue(alice, requestOf('late'), ACCEPTED)).rejects.toMatchObject({ code: 'shutting_down' });
    expect(tasks.rows).toEqual([]);
  });
});

describe('TaskQueueService: the fair order and one active Task', () => {
  it("serves a newcomer's Task before the rest of a flood, says so in the positions, and runs one Task at a time", async () => {
    const { queue, tasks, agent, ended } = buildQueue();
    const first = await queue.enqueue(alice, requestOf('a0'), ACCEPTED);
    await agent.started(first.id);
    const flood = [];
    for (const request of ['a1', 'a2', 'a3']) flood.push(await queue.enqueue(alice, requestOf(request), ACCEPTED));
    const newcomer = await queue.enqueue(bob, requestOf('b0'), ACCEPTED);
    const queued = [...flood, newcomer].map((task) => ({ id: task.id, status: 'queued' as const }));
    const positions = await queue.queuePositions(queued);
    expect([...flood, newcomer].map((task) => positions.get(task.id))).toEqual([2, 3, 4, 1]);
    // One active Task: nothing else started while a0 runs.
    expect(agent.runs.map((run) => run.request)).toEqual(['a0']);
    expect((await queue.countByStatus()).planning).toBe(1);

    const order = ['a0'];
    for (const next of [newcomer, ...flood]) {
      agent.complete(agent.runs.at(-1)!.id, 'done');
      await agent.started(next.id);
      // The previous Task had ended (its row written) before this one was claimed.
      expect((await tasks.findById(agent.runs.at(-2)!.id))!.status).toBe('completed');
      order.push(agent.runs.at(-1)!.request);
    }
    expect(order).toEqual(['a0', 'b0', 'a1', 'a2', 'a3']);
    agent.complete(flood[2].id, 'done');
    await ended(flood[2].id);
    expect(await queue.countByStatus()).toMatchObject({ queued: 0, planning: 0, running: 0, completed: 5 });
  });
});

describe('TaskQueueService: cancel', () => {
  it('cancels a queued Task at once: its row, its event, its audit; the running Task goes on', async () => {
    const { queue, audit, agent, published } = buildQueue();
    const running = await queue.enqueue(alice, requestOf('running'), ACCEPTED);
    await agent.started(running.id);
    const waiting = await queue.enqueue(alice, requestOf('waiting'), ACCEPTED);
    const cancelled = await queue.cancel(alice, waiting.id);
    expect(cancelled).toMatchObject({ status: 'cancelled', result: 'Cancelled on request before it started.' });
    expect(published.filter((event) => event.type === 'ended')).toEqual([
      { type: 'ended', taskId: waiting.id, status: 'cancelled', result: 'Cancelled on request before it started.' },
    ]);
    expect(audit.of('task.status').filter((event) => event.taskId === waiting.id)).toEqual([{ outcome: 'ok', taskId: waiting.id, detail: { status: 'cancelled' } }]);
    expect((await queue.findOwned(alice, running.id))!.status).toBe('planning');
  });

  it('fires the running Task’s token: the run stops and the Task ends cancelled; the next Task starts', async () => {
    const { queue, agent, ended } = buildQueue();
    const running = await queue.enqueue(alice, requestOf('long'), ACCEPTED);
    await agent.started(running.id);
    const next = await queue.enqueue(alice, requestOf('next'), ACCEPTED);
    await queue.cancel(alice, running.id);
    expect(await ended(running.id)).toMatchObject({ status: 'cancelled', result: 'Cancelled on request.' });
    await agent.started(next.id);
  });

  it("answers another user's Task as a missing one and leaves it alone; a terminal Task stays as it ended", async () => {
    const { queue, agent, ended } = buildQueue();
    const task = await queue.enqueue(alice, requestOf('mine'), ACCEPTED);
    await agent.started(task.id);
    expect(await queue.cancel(bob, task.id)).toBeNull();
    expect(await queue.findOwned(bob, task.id)).toBeNull();
    expect((await queue.findOwned(alice, task.id))!.status).toBe('planning');
    agent.complete(task.id, 'finished');
    await ended(task.id);
    expect(await queue.cancel(alice, task.id)).toMatchObject({ status: 'completed', result: 'finished' });
    // The admin's cancel reaches any Task, and a missing one answers null.
    expect(await queue.cancelAny(callerOf('admin', { admin: true }), '00000000-0000-4000-8000-000000000000')).toBeNull();
  });
});
