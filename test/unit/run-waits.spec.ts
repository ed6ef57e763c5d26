import { describe, expect, it } from '@jest/globals';
import type { AgentTask } from '../../src/agent/agent-runner.js';
import type { RunEvent } from '../../src/agent/core/run-events.js';
import { RunWaitEntity } from '../../src/agent/run-wait.entity.js';
import { ApprovalEntity } from '../../src/approvals/approval.entity.js';
import { validateConfig } from '../../src/config/agent-config.js';
import type { ChatReply, ChatRequest } from '../../src/ollama/ollama.gateway.js';
import { buildAgent } from '../support/agent-harness.js';

/**
 * Issue 35 (ADR 0020 §2): a run that waits for a person is a run_waits row of its kind holding the resume
 * point, stored in one unit of work with the approvals row the person is shown; the next Task of the
 * session continues it. AgentService with the real ApprovalsService and PausedRuns on in-memory stores.
 */

function scriptedOllama(script: Partial<ChatReply>[]) {
  const chats: ChatRequest[] = [];
  const gateway = {
    model: async () => ({ capabilities: ['completion', 'tools'], contextLength: 40_960 }),
    version: async () => '0.12.10',
    chat: async (request: ChatRequest): Promise<ChatReply> => {
      const { signal: _signal, onContent: _onContent, ...sent } = request;
      chats.push(structuredClone(sent) as ChatRequest);
      return { content: '', thinking: '', toolCalls: [], doneReason: 'stop', promptEvalCount: 10, evalCount: 5, ...(script.shift() ?? { content: 'unscripted' }) };
    },
  };
  return { gateway, chats };
}

const task = (id: string, request: string): AgentTask => ({
  id,
  sessionId: 's1',
  owner: 'alice',
  unattended: null,
  ownerGroups: [],
  ownerEmail: null,
  client: null,
  answersInPlace: false,
  surface: 'mcp-http',
  locale: null,
  mode: 'agent',
  tier: 'default',
  request,
  budget: null,
  temperature: 0.2,
  images: [],
  history: [],
});
const noop = async () => undefined;
const call = (name: string, args: Record<string, unknown>): Partial<ChatReply> => ({ toolCalls: [{ function: { name, arguments: args } }] });
const lastMessage = (chat: ChatRequest) => chat.messages.at(-1)!;

function setup(script: Partial<ChatReply>[], observe?: (event: RunEvent) => void) {
  const ollama = scriptedOllama(script);
  const agent = buildAgent(ollama.gateway, validateConfig({ agent: { approvals: { mode: 'commands' } } }), { observe });
  const run = (id: string, request: string) => agent.service.run(task(id, request), noop, new AbortController().signal);
  return { ...agent, chats: ollama.chats, run };
}

describe('a pause for a person, stored as the run’s wait (issue 35)', () => {
  it('an approval: the request, its audit event and the wait with the resume point commit as one unit; the next Task approves and the run goes on', async () => {
    const h = setup([call('run_command', { command: 'npm test' }), { content: 'The tests pass.' }]);
    const paused = await h.run('t1', 'run the tests');
    expect(paused.result).toMatch(/npm test/);
    const [approval] = h.approvalRows.rows;
    const [wait] = h.waits.rows;
    expect(approval).toMatchObject({ kind: 'approval', tool: 'run_command', subject: 'npm test', state: 'pending', resume: '' });
    expect(wait).toMatchObject({ kind: 'approval', state: 'open', approvalId: approval.id, taskId: 't1', sessionId: 's1', owner: 'alice' });
    expect(JSON.parse(wait.resume!)).toMatchObject({ version: 2, pause: { kind: 'approval', id: approval.id } });
    const unit = h.unitOfWork.units.find((candidate) => candidate.writes?.some((step) => step.op === 'insert' && step.entity === RunWaitEntity))!;
    expect(unit.writes!.map((step) => step.op === 'insert' && step.entity)).toEqual([ApprovalEntity, RunWaitEntity]);
    expect(unit.shared!.map((shared) => (shared.item as { action: string }).action)).toEqual(['approval.requested']);

    const answered = await h.run('t2', 'approve');
    expect(answered.result).toBe('The tests pass.');
    expect(h.toolbox.ran.map((ran) => ran.function.arguments)).toEqual([{ command: 'npm test' }]);
    expect(lastMessage(h.chats[1])).toMatchObject({ role: 'tool', content: 'run_command ok' });
    expect(wait.state).toBe('taken');
    expect(approval).toMatchObject({ state: 'granted', answerTaskId: 't2' });
  });

  it('a question: rows of kind question; the option chosen by its number is what the model reads', async () => {
    const h = setup([call('ask_user', { question: 'Which colour?', options: ['red', 'blue'] }), { content: 'Blue it is.' }]);
    const paused = await h.run('t1', 'paint it');
    expect(paused.result).toContain('Which colour?');
    expect(h.approvalRows.rows).toEqual([expect.objectContaining({ kind: 'question', tool: 'ask_user', options: '["red","blue"]' })]);
    expect(h.waits.rows).toEqual([expect.objectContaining({ kind: 'question', state: 'open', approvalId: h.approvalRows.rows[0].id })]);
    expect((await h.run('t2', '2')).result).toBe('Blue it is.');
    expect(lastMessage(h.chats[1])).toMatchObject({ role: 'tool', content: 'The user chose: blue' });
    expect(h.unitOfWork.events.map((event) => event.action)).toEqual(['question.asked', 'question.answered']);
  });

  it('the paused event (webhooks, subscriptions/listen, A2A push) is emitted after the pause is stored: a client told reads the request', async () => {
    const seen: { event: RunEvent; approvals: number; waits: number }[] = [];
    const h: ReturnType<typeof setup> = setup([call('run_command', { command: 'npm test' })], (event) => {
      if (event.type === 'paused') seen.push({ event, approvals: h.approvalRows.rows.length, waits: h.waits.rows.length });
    });
    await h.run('t1', 'run the tests');
    const [approval] = h.approvalRows.rows;
    expect(seen).toEqual([{ event: { type: 'paused', taskId: 't1', kind: 'approval', id: approval.id }, approvals: 1, waits: 1 }]);
  });

  it('a write of the pause that fails leaves nothing a Task could not continue: no request, no wait, no event', async () => {
    const h = setup([call('run_command', { command: 'npm test' }), { content: 'What should I do with "approve"?' }]);
    h.unitOfWork.fails = (step) => step.op === 'insert' && step.entity === RunWaitEntity;
    await expect(h.run('t1', 'run the tests')).rejects.toThrow(/disk is full/);
    // No client is told of a pause that was not stored.
    expect(h.events.filter((event) => event.type === 'paused')).toEqual([]);
    expect(h.approvalRows.rows).toEqual([]);
    expect(h.waits.rows).toEqual([]);
    expect(h.unitOfWork.events).toEqual([]);
    // Nothing pending: the next message is a new request, and nothing runs unapproved.
    h.unitOfWork.fails = null;
    expect((await h.run('t2', 'approve')).result).toBe('What should I do with "approve"?');
    expect(lastMessage(h.chats[1])).toMatchObject({ role: 'user', content: 'approve' });
    expect(h.toolbox.ran).toEqual([]);
  });

  it('a request stored before the run’s waits (its resume point in approvals.resume) still resumes', async () => {
    const h = setup([call('run_command', { command: 'npm test' }), { content: 'The tests pass.' }]);
    await h.run('t1', 'run the tests');
    // As an older version left it: the point in the approvals row, and no wait row.
    const [approval] = h.approvalRows.rows;
    approval.resume = h.waits.rows.splice(0)[0].resume!;
    expect((await h.run('t2', 'approve')).result).toBe('The tests pass.');
    expect(h.toolbox.ran).toHaveLength(1);
    expect(approval.state).toBe('granted');
  });

  it('a pending request whose pause was never stored is dropped, and the next message is a new request', async () => {
    const h = setup([call('run_command', { command: 'npm test' }), { content: 'Hello.' }]);
    await h.run('t1', 'run the tests');
    // The run stopped between the request (stored at once for an answer in place) and its pause.
    h.waits.rows.splice(0);
    expect((await h.run('t2', 'hello')).result).toBe('Hello.');
    expect(h.approvalRows.rows[0].state).toBe('dropped');
    expect(lastMessage(h.chats[1])).toMatchObject({ role: 'user', content: 'hello' });
    expect(h.toolbox.ran).toEqual([]);
  });
});
