import { describe, expect, it } from '@jest/globals';
import { ChatService } from '../../src/chat/chat.service.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { inputKind, type ConversationWait, type InputFacts } from '../../src/conversation/input-order.js';
import { buildIntake, callerOf, seedPending, seedTask } from '../support/intake-harness.js';

/**
 * One file for the conversation's services, so their modules load once (the unit suite stays under 15 s):
 * the order of inputKind as a table (pure), then ConversationIntake and ChatService on in-memory stores.
 */
// ADR 0020 §4 / docs/agent.md: what a person’s input is, decided in one order (no server).
const approval: ConversationWait = { kind: 'approval' };
const question: ConversationWait = { kind: 'question', options: ['keep both', 'undo', 'delete'] };
const form: ConversationWait = { kind: 'form' };
const facts = (text: string, more: Partial<InputFacts> = {}): InputFacts => ({ text, steer: 'none', keepDuringWait: false, wait: null, decidedLast: null, undo: true, ...more });

const table: [string, InputFacts, ReturnType<typeof inputKind>][] = [
  // Nothing waits: undo, or a new request.
  ['a new request', facts('fix the test'), { kind: 'request' }],
  ['"yes" with no pending wait and nothing decided: a request', facts('yes'), { kind: 'request' }],
  ['"yes" with no wait, the newest turn decided already: refused', facts('yes', { decidedLast: approval }), { kind: 'already_decided' }],
  ['an option again after the question was answered: refused', facts('2', { decidedLast: question }), { kind: 'already_decided' }],
  ['a new instruction after a decision: a request', facts('now run the linter', { decidedLast: approval }), { kind: 'request' }],
  ['undo', facts('undo'), { kind: 'undo' }],
  ['undo with history off: a request', facts('undo', { undo: false }), { kind: 'request' }],
  ['"undo the last refactoring": a request, not undo', facts('undo the last refactoring'), { kind: 'request' }],
  // An approval waits for the conversation.
  ['"approve" while an approval waits', facts(' Approve ', { wait: approval }), { kind: 'answer', answer: 'approve' }],
  ['"いいえ" while an approval waits', facts('いいえ', { wait: approval }), { kind: 'answer', answer: 'deny' }],
  [
    '"yes" while a new approval waits, the newest turn having decided the one before: the answer',
    facts('yes', { wait: approval, decidedLast: approval }),
    { kind: 'answer', answer: 'approve' },
  ],
  ['"undo" while an approval waits: undo, the wait stays open', facts('undo', { wait: approval }), { kind: 'undo' }],
  ['an instruction while an approval waits: a request (ends the wait, not approved)', facts('use pnpm instead', { wait: approval }), { kind: 'request' }],
  // A question waits.
  ['an option by number', facts('3', { wait: question }), { kind: 'choice', option: 'delete' }],
  ['an option by text', facts('Keep Both', { wait: question }), { kind: 'choice', option: 'keep both' }],
  ['"undo" when "undo" is an option: the choice (choice before undo)', facts('undo', { wait: question }), { kind: 'choice', option: 'undo' }],
  ['"yes" while a question waits: not an option, a request', facts('yes', { wait: question }), { kind: 'request' }],
  ['a number out of range: a request', facts('7', { wait: question }), { kind: 'request' }],
  // Another server's form is answered on the console or in place, never by a message.
  ['"approve" while a form waits: a request', facts('approve', { wait: form }), { kind: 'request' }],
  // Corrections.
  ['a correction for a running Task', facts('the other file', { steer: 'running' }), { kind: 'steer' }],
  ['"approve" as a correction for a running Task: a correction (its wait, if any, is in place)', facts('approve', { steer: 'running' }), { kind: 'steer' }],
  ['a correction with nothing running: a follow-up', facts('the other file', { steer: 'idle' }), { kind: 'follow_up' }],
  ['"undo" as a correction with nothing running: undo', facts('undo', { steer: 'idle' }), { kind: 'undo' }],
  ['an explicit correction while an approval waits: kept, answers nothing', facts('the other file', { steer: 'idle', keepDuringWait: true, wait: approval }), { kind: 'kept' }],
  ['an explicit "approve" while an approval waits: the answer', facts('approve', { steer: 'idle', keepDuringWait: true, wait: approval }), { kind: 'answer', answer: 'approve' }],
  ['an explicit option while a question waits: the choice', facts('1', { steer: 'idle', keepDuringWait: true, wait: question }), { kind: 'choice', option: 'keep both' }],
  [
    'a message to a paused Task (A2A input-required, MCP agent_run): the new instruction that ends the wait',
    facts('the other file', { steer: 'idle', wait: approval }),
    { kind: 'follow_up' },
  ],
];

describe('what a person’s input is (one order, first match wins)', () => {
  it.each(table)('%s', (_name, input, expected) => {
    expect(inputKind(input)).toEqual(expected);
  });
});

/**
 * ConversationIntake on in-memory stores (a fake per repository, the real intake, queue, sessions,
 * approvals and audit): what each kind of input stores, that it is audited once, and that a refusal
 * stores nothing. The order itself is the table above.
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

/**
 * ChatService on in-memory stores (intake-harness: a fake per repository; the real Chat rules, intake,
 * queue, approvals and audit): what a request becomes, what a correction is answered with at once, and
 * that a refused request is audited and stores nothing. Following a queued Task to its end (TaskFeed) is
 * the e2e's (chat-api, steering, steering-wait).
 */
const chatConfig = validateConfig({ agent: { steering: { max_per_task: 3 } } });

function setup() {
  const h = buildIntake(chatConfig);
  const conversations = { withFiles: async () => Promise.reject(new Error('not followed here')), asking: async () => null };
  const chat = new ChatService(conversations as never, h.intake, {} as never, h.audit, h.inputFiles, chatConfig);
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
