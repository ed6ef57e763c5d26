import { describe, expect, it } from '@jest/globals';
import { ChatService } from '../../src/chat/chat.service.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { buildIntake, callerOf, seedPending, seedTask } from '../support/intake-harness.js';

/**
 * ChatService on in-memory stores (intake-harness: a fake per repository; the real Chat rules, intake,
 * queue, approvals and audit): what a request becomes, what a correction is answered with at once, and
 * that a refused request is audited and stores nothing. Following a queued Task to its end (TaskFeed) is
 * the e2e's (chat-api, steering, steering-wait).
 */
const config = validateConfig({ agent: { steering: { max_per_task: 3 } } });
const alice = callerOf('alice');
const bob = callerOf('bob');

function setup() {
  const h = buildIntake(config);
  const conversations = { withFiles: async () => Promise.reject(new Error('not followed here')), asking: async () => null };
  const chat = new ChatService(conversations as never, h.intake, {} as never, h.audit, h.inputFiles, config);
  return { ...h, chat };
}
const body = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'ollama-agent', messages: [{ role: 'user', content }], ...extra });
const never = new AbortController().signal;
const S1 = '0b5a3c1e-6f0e-4d7a-9c11-2f3a4b5c6d7e';
const T1 = '7d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6';

describe('ChatService (memory stores)', () => {
  it('queues a request as a Task of a new session, audited once as chat.completions', async () => {
    const h = setup();
    const accepted = await h.chat.accept(alice, body('fix the test'), 'en');
    expect(accepted).toMatchObject({ stream: false, steered: false, followUp: false, task: { status: 'queued', owner: 'alice' } });
    expect(h.db.audit.map((event) => [event.action, event.outcome, event.taskId])).toEqual([['chat.completions', 'ok', accepted.task.id]]);
  });

  it('answers agent_steer for the running Task at once: that Task, running, agent_state steered; no second Task', async () => {
    const h = setup();
    seedTask(h.db, { id: T1, sessionId: S1, owner: 'alice', status: 'running' });
    const accepted = await h.chat.accept(alice, body('the other file', { session_id: S1, agent_steer: true }), 'en');
    expect(await h.chat.completion(accepted, never, 'en')).toMatchObject({
      task_id: T1,
      session_id: S1,
      status: 'running',
      agent_state: 'steered',
      choices: [{ finish_reason: 'stop' }],
    });
    expect(h.db.tasks.size).toBe(1);
  });

  it('answers agent_steer while the session’s Task waits for an approval with kept: the approval stays pending', async () => {
    const h = setup();
    const paused = seedTask(h.db, { id: T1, sessionId: S1, owner: 'alice', status: 'completed', steeringClosed: true });
    seedPending(h.db, paused, { tool: 'run_command', subject: 'npm test' });
    const accepted = await h.chat.accept(alice, body('also lint', { session_id: S1, agent_steer: true, stream: true }), 'en');
    const chunks = [];
    for await (const chunk of h.chat.chunks(accepted, never, 'en')) chunks.push(chunk);
    expect(chunks.at(-1)).toMatchObject({ task_id: T1, status: 'completed', agent_state: 'kept', choices: [{ finish_reason: 'stop' }] });
    expect(h.db.approvals[0].state).toBe('pending');
    expect(h.db.tasks.size).toBe(1);
  });

  it('decides the pending approval with "yes" and refuses a second one (409 already_decided), queueing nothing for it', async () => {
    const h = setup();
    const paused = seedTask(h.db, { id: T1, sessionId: S1, owner: 'alice', status: 'completed' });
    seedPending(h.db, paused, { tool: 'run_command', subject: 'npm test' });
    await h.chat.accept(alice, body('yes', { session_id: S1 }), 'en');
    await expect(h.chat.accept(alice, body('yes', { session_id: S1 }), 'en')).rejects.toMatchObject({ status: 409, code: 'already_decided' });
    expect(h.db.tasks.size).toBe(2);
    expect(h.db.audit.map((event) => [event.action, event.outcome])).toEqual([
      ['chat.completions', 'ok'],
      ['approval.granted', 'ok'],
      ['chat.completions', 'rejected'],
    ]);
  });

  it('refuses another user’s session as a missing one (400 session_not_found) and a malformed agent_steer (400), audited, storing nothing', async () => {
    const h = setup();
    seedTask(h.db, { id: T1, sessionId: S1, owner: 'alice', status: 'running' });
    await expect(h.chat.accept(bob, body('the other file', { session_id: S1, agent_steer: true }), 'en')).rejects.toMatchObject({ status: 400, code: 'session_not_found' });
    await expect(h.chat.accept(alice, body('the other file', { agent_steer: true }), 'en')).rejects.toMatchObject({ status: 400, param: 'agent_steer' });
    expect(h.db.tasks.size).toBe(1);
    expect(h.db.steers).toEqual([]);
    expect(h.db.audit.map((event) => [event.action, event.outcome])).toEqual([
      ['chat.completions', 'rejected'],
      ['chat.completions', 'rejected'],
    ]);
  });
});
