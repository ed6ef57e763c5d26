import { describe, expect, it } from '@jest/globals';
import { validateConfig } from '../../src/config/agent-config.js';
import { buildIntake, callerOf, seedPending, seedTask } from '../support/intake-harness.js';

/**
 * ConversationIntake on in-memory stores (a fake per repository, the real intake, queue, sessions,
 * approvals and audit): what each kind of input stores, that it is audited once, and that a refusal
 * stores nothing. The order itself is input-order.spec's table.
 */
const config = (extra: Record<string, unknown> = {}) => validateConfig({ queue: { max_queued_per_user: 2 }, agent: { steering: { max_per_task: 2 } }, ...extra });
const alice = callerOf('alice');
const bob = callerOf('bob');
const accepted = { action: 'chat.completions', detail: {} };
const request = (text: string, sessionId: string | null = null) => ({ request: text, sessionId, temperature: null, images: [] });
const actions = (h: ReturnType<typeof buildIntake>) => h.db.audit.map((event) => [event.action, event.outcome, (JSON.parse(event.detail ?? '{}') as { as?: string }).as ?? null]);

describe('ConversationIntake.submit (memory stores)', () => {
  it('queues a new request in a new session, audited once as a request', async () => {
    const h = buildIntake(config());
    const outcome = await h.intake.submit(alice, { request: request('fix the test'), surface: 'chat' }, accepted);
    expect(outcome).toMatchObject({ kind: 'queued', as: 'request', task: { status: 'queued', owner: 'alice' } });
    expect(h.db.tasks.size).toBe(1);
    expect(h.db.sessions.size).toBe(1);
    expect(actions(h)).toEqual([['chat.completions', 'ok', 'request']]);
    expect(h.woken).toHaveLength(1);
  });

  it('answers another user’s session as a missing one, and stores nothing', async () => {
    const h = buildIntake(config());
    seedTask(h.db, { id: 't1', sessionId: 's1', owner: 'alice', status: 'completed' });
    await expect(h.intake.submit(bob, { request: request('approve', 's1'), surface: 'chat' }, accepted)).rejects.toMatchObject({ code: 'session_not_found' });
    await expect(h.intake.submit(bob, { request: request('x', 's1'), surface: 'chat', steer: { sessionId: 's1', keep: true } }, accepted)).rejects.toMatchObject({
      code: 'session_not_found',
    });
    expect(await h.intake.submit(bob, { request: request('x'), surface: 'a2a', steer: { taskId: 't1' } }, accepted)).toEqual({ kind: 'not_found' });
    expect(h.db.tasks.size).toBe(1);
    expect(h.db.audit).toEqual([]);
  });

  it('takes "approve" for the pending approval with the Task that carries it: decided, queued and audited together', async () => {
    const h = buildIntake(config());
    const paused = seedTask(h.db, { id: 't1', sessionId: 's1', owner: 'alice', status: 'completed' });
    seedPending(h.db, paused, { tool: 'run_command', subject: 'npm test' });
    const outcome = await h.intake.submit(alice, { request: request('approve', 's1'), surface: 'chat' }, accepted);
    expect(outcome).toMatchObject({ kind: 'queued', as: 'answer' });
    const answer = outcome.kind === 'queued' ? outcome.task.id : '';
    expect(h.db.approvals[0]).toMatchObject({ state: 'granted', answerTaskId: answer, answeredVia: 'conversation' });
    expect(actions(h)).toEqual([
      ['chat.completions', 'ok', 'answer'],
      ['approval.granted', 'ok', null],
    ]);
    // A second "approve": nothing waits and the newest turn carries the decision: refused, nothing stored.
    await expect(h.intake.submit(alice, { request: request('yes', 's1'), surface: 'chat' }, accepted)).rejects.toMatchObject({ code: 'already_decided' });
    expect(h.db.tasks.size).toBe(2);
  });

  it('takes an option for the pending question as its choice', async () => {
    const h = buildIntake(config());
    const paused = seedTask(h.db, { id: 't1', sessionId: 's1', owner: 'alice', status: 'completed' });
    seedPending(h.db, paused, { tool: 'ask_user', subject: 'Which one?', options: ['keep both', 'undo'] });
    expect(await h.intake.submit(alice, { request: request('undo', 's1'), surface: 'mcp' }, accepted)).toMatchObject({ kind: 'queued', as: 'choice' });
    expect(h.db.approvals[0]).toMatchObject({ state: 'granted', reason: 'undo' });
  });

  it('reads undo while an approval waits as undo, and leaves the approval pending', async () => {
    const h = buildIntake(config());
    const paused = seedTask(h.db, { id: 't1', sessionId: 's1', owner: 'alice', status: 'completed' });
    seedPending(h.db, paused, { tool: 'run_command', subject: 'npm test' });
    expect(await h.intake.submit(alice, { request: request('undo', 's1'), surface: 'chat' }, accepted)).toMatchObject({ kind: 'queued', as: 'undo' });
    expect(h.db.approvals[0].state).toBe('pending');
  });

  it('gives a correction to the running Task (no second Task), up to agent.steering.max_per_task', async () => {
    const h = buildIntake(config());
    seedTask(h.db, { id: 't1', sessionId: 's1', owner: 'alice', status: 'running' });
    const steer = { sessionId: 's1', keep: true };
    expect(await h.intake.submit(alice, { request: request('the other file', 's1'), surface: 'chat', steer }, accepted)).toMatchObject({ kind: 'steered', position: 1 });
    expect(await h.intake.submit(alice, { request: request('and the tests', 's1'), surface: 'chat', steer }, accepted)).toMatchObject({ kind: 'steered', position: 2 });
    await expect(h.intake.submit(alice, { request: request('one more', 's1'), surface: 'chat', steer }, accepted)).rejects.toMatchObject({ code: 'invalid_input' });
    expect(h.db.tasks.size).toBe(1);
    expect(h.db.steers.map((row) => [row.text, row.position])).toEqual([
      ['the other file', 1],
      ['and the tests', 2],
    ]);
    expect(actions(h)).toEqual([
      ['conversation.steer', 'ok', null],
      ['conversation.steer', 'ok', null],
      ['conversation.steer', 'rejected', null],
    ]);
  });

  it('keeps a correction sent while the Task waits for the conversation’s answer: the approval stays pending, no Task is queued', async () => {
    const h = buildIntake(config());
    const paused = seedTask(h.db, { id: 't1', sessionId: 's1', owner: 'alice', status: 'completed', steeringClosed: true });
    const pending = seedPending(h.db, paused, { tool: 'run_command', subject: 'npm test' });
    const outcome = await h.intake.submit(alice, { request: request('also run the linter', 's1'), surface: 'chat', steer: { sessionId: 's1', keep: true } }, accepted);
    expect(outcome).toMatchObject({ kind: 'kept', task: { id: 't1' }, position: 1 });
    expect(h.db.approvals[0].state).toBe('pending');
    expect(h.db.tasks.size).toBe(1);
    expect(h.db.steers).toEqual([expect.objectContaining({ taskId: 't1', text: 'also run the linter', state: 'open' })]);
    expect(h.db.audit.map((event) => [event.action, JSON.parse(event.detail ?? '{}').kept_for])).toEqual([['conversation.steer', pending.id]]);
  });

  it('makes a message to a paused Task without the explicit flag (A2A, MCP) the new instruction, as those protocols answer a wait', async () => {
    const h = buildIntake(config());
    const paused = seedTask(h.db, { id: 't1', sessionId: 's1', owner: 'alice', status: 'completed' });
    seedPending(h.db, paused, { tool: 'run_command', subject: 'npm test' });
    expect(await h.intake.submit(alice, { request: request('use pnpm'), surface: 'a2a', steer: { taskId: 't1' } }, accepted)).toMatchObject({
      kind: 'queued',
      as: 'follow_up',
      task: { sessionId: 's1' },
    });
    expect(h.db.steers).toEqual([]);
  });

  it('refuses past queue.max_queued_per_user and stores nothing of the refused request', async () => {
    const h = buildIntake(config());
    await h.intake.submit(alice, { request: request('one'), surface: 'chat' }, accepted);
    await h.intake.submit(alice, { request: request('two'), surface: 'chat' }, accepted);
    await expect(h.intake.submit(alice, { request: request('three'), surface: 'chat' }, accepted)).rejects.toMatchObject({ code: 'queue_full' });
    expect(h.db.tasks.size).toBe(2);
    expect(h.db.sessions.size).toBe(2);
    expect(h.db.audit).toHaveLength(2);
  });
});
