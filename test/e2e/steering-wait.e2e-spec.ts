import { describe, expect, it } from '@jest/globals';
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import OpenAI from 'openai';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { openBrowser } from '../support/browser.js';
import { fieldsOf, httpRawDispatch, modernClient, tasksSession, textOf, type InputRequestHandler } from '../support/mcp-clients.js';
import { pollUntil } from '../support/poll.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';

/**
 * Steering while the run waits for a person (issue 35): a Tasks-aware MCP client holds the Task in place
 * on an approval; a correction sent meanwhile (Chat API, agent_steer) answers nothing (the approval is
 * still the person's to give), is kept, and reaches the model after the approval's result.
 */
describe('a correction that arrives while the Task waits for an approval in place', () => {
  const stack = useStack({ config: { queue: { progress_poll_ms: 20 }, workspace: { isolation: 'shared' }, agent: { approvals: { mode: 'commands', wait_ms: 60_000 } } } });

  it('is kept, answers nothing, and reaches the model when the wait ends', async () => {
    const ollama = stack.ollama;
    ollama.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo checked' } }], promptEvalCount: 10, evalCount: 5 }, { content: 'Checked; noted.' });
    const client = stack.closeOnStop(await modernClient(stack.service.url));
    const chat = new OpenAI({ baseURL: `${stack.base}/v1`, apiKey: 'unused', maxRetries: 0 });
    let steered: unknown;
    let pendingWhileSteered: unknown;
    const onInputRequest: InputRequestHandler = async (_request, context) => {
      const { session_id: sessionId } = fieldsOf(textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: context.taskId } })));
      steered = await chat.chat.completions.create({
        model: 'ollama-agent',
        messages: [{ role: 'user', content: 'Also say which shell ran it.' }],
        session_id: sessionId,
        agent_steer: true,
      } as never);
      pendingWhileSteered = (await probe<{ state: string }>(stack.database, 'SELECT state FROM approvals WHERE task_id = ?', context.taskId))[0].state;
      return { action: 'accept', content: { approve: true } };
    };
    const session = tasksSession(client, httpRawDispatch(stack.service.url), onInputRequest);
    const exec = (await session.callTool('agent_run', { request: 'Check it.' })) as { handle: { taskId: string }; settle(): Promise<{ outcome: unknown }> };
    const result = resultFromTaskOutcome<{ content: { text: string }[] }>((await exec.settle()).outcome as never);
    expect(fieldsOf(textOf(result))).toMatchObject({ status: 'completed', result: 'Checked; noted.' });
    expect(steered).toMatchObject({ task_id: exec.handle.taskId, status: 'running', agent_state: 'steered' });
    // The correction answered nothing: the approval was still pending, and the person's in-place answer granted it.
    expect(pendingWhileSteered).toBe('pending');
    expect(await probe(stack.database, 'SELECT state, answered_via FROM approvals WHERE task_id = ?', exec.handle.taskId)).toEqual([
      { state: 'granted', answered_via: 'in_place' },
    ]);
    const prompt = ollama.workChats.at(-1)!.body.messages;
    expect(prompt.slice(-2).map((message) => [message.role, message.content.split('\n')[0]])).toEqual([
      ['tool', 'exit code 0'],
      ['user', 'Correction from the user while you work:'],
    ]);
    await session.close();
  });
  it('paused end-and-resume (no client answers in place): a correction is kept, the approval stays pending, and the model reads it after the approved result', async () => {
    const ollama = stack.ollama;
    ollama.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo checked' } }], promptEvalCount: 10, evalCount: 5 }, { content: 'Checked with sh; noted.' });
    const chat = new OpenAI({ baseURL: `${stack.base}/v1`, apiKey: 'unused', maxRetries: 0 });
    const ask = (content: string, extra: Record<string, unknown> = {}) =>
      chat.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content }], ...extra } as never) as unknown as Promise<Record<string, unknown>>;
    // The Chat API answers nothing in place: the Task ends with the approval request.
    const paused = await ask('Check it.');
    expect(paused).toMatchObject({ status: 'completed', agent_state: 'input_required', agent_input: { kind: 'approval' } });
    const sessionId = paused.session_id as string;
    const kept = await ask('Also say which shell ran it.', { session_id: sessionId, agent_steer: true });
    expect(kept).toMatchObject({ task_id: paused.task_id, session_id: sessionId, status: 'completed', agent_state: 'kept' });
    // It answered nothing: the approval is still pending, and no Task was queued for it.
    expect(await probe(stack.database, 'SELECT state FROM approvals WHERE session_id = ?', sessionId)).toEqual([{ state: 'pending' }]);
    expect(Number((await probe<{ n: number | string }>(stack.database, 'SELECT COUNT(*) AS n FROM tasks WHERE session_id = ?', sessionId))[0].n)).toBe(1);
    const approved = await ask('approve', { session_id: sessionId });
    expect(approved).toMatchObject({ status: 'completed', choices: [{ message: { content: 'Checked with sh; noted.' } }] });
    expect(await probe(stack.database, 'SELECT state, answered_via FROM approvals WHERE session_id = ?', sessionId)).toEqual([{ state: 'granted', answered_via: 'conversation' }]);
    const prompt = ollama.workChats.at(-1)!.body.messages;
    expect(prompt.slice(-2).map((message) => [message.role, message.content.split('\n')[0]])).toEqual([
      ['tool', 'exit code 0'],
      ['user', 'Correction from the user while you work:'],
    ]);
    expect(prompt.at(-1)!.content).toMatch(/Also say which shell ran it\.$/);
  });
});

/**
 * The console's own correction (`POST /admin/tasks/:id/steer`, and the box on the Task's page) for a Task
 * paused for the conversation's answer: kept through the same intake path as Chat `agent_steer`, never
 * refused; another user is answered 404 and nothing is kept.
 */
describe('a console correction for a Task paused for the conversation', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, queue: { progress_poll_ms: 20 }, agent: { approvals: { mode: 'commands' } } } });

  it('is kept (the endpoint and the page’s box), answers nothing, and the model reads it after the approved result', async () => {
    const ollama = stack.ollama;
    ollama.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'echo checked' } }], promptEvalCount: 10, evalCount: 5 }, { content: 'Checked, briefly.' });
    const chat = new OpenAI({ baseURL: `${stack.base}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: as('alice') });
    const ask = (content: string, extra: Record<string, unknown> = {}) =>
      chat.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content }], ...extra } as never) as unknown as Promise<Record<string, unknown>>;
    const paused = await ask('Check it.');
    expect(paused).toMatchObject({ status: 'completed', agent_state: 'input_required', agent_input: { kind: 'approval' } });
    const taskId = paused.task_id as string;
    const sessionId = paused.session_id as string;
    const steer = (headers: Record<string, string>, text: string) =>
      fetch(`${stack.base}/admin/tasks/${taskId}/steer?text=${encodeURIComponent(text)}`, { method: 'POST', headers });
    expect((await steer(as('bob'), 'bob was here')).status).toBe(404);
    const byOwner = await steer(as('alice'), 'Keep it brief.');
    expect(byOwner.status).toBe(200);
    expect(await byOwner.json()).toMatchObject({ task_id: taskId, status: 'completed' });
    // The page of the paused Task has the box too.
    const browser = stack.closeOnStop(await openBrowser());
    const page = await (await browser.newContext({ extraHTTPHeaders: as('alice') })).newPage();
    await page.goto(`${stack.base}/admin#/tasks/${taskId}`);
    await page.fill('#steer-text', 'Say which shell ran it.');
    await page.click('#steer button[type=submit]');
    const kept = () => probe<{ body: string; state: string }>(stack.database, "SELECT body, state FROM run_waits WHERE task_id = ? AND kind = 'steer' ORDER BY position", taskId);
    await pollUntil(async () => ((await kept()).length === 2 ? true : undefined), 'the page’s correction to be kept');
    expect(await kept()).toEqual([
      { body: 'Keep it brief.', state: 'open' },
      { body: 'Say which shell ran it.', state: 'open' },
    ]);
    // They answered nothing: the approval is pending, no Task was queued, and each was audited as kept for it.
    const [approval] = await probe<{ id: string; state: string }>(stack.database, 'SELECT id, state FROM approvals WHERE session_id = ?', sessionId);
    expect(approval.state).toBe('pending');
    expect(Number((await probe<{ n: number | string }>(stack.database, 'SELECT COUNT(*) AS n FROM tasks WHERE session_id = ?', sessionId))[0].n)).toBe(1);
    const events = await probe<{ actor: string; detail: string }>(
      stack.database,
      "SELECT actor, detail FROM audit_events WHERE action = 'conversation.steer' AND outcome = 'ok' AND task_id = ?",
      taskId,
    );
    expect(events.map((event) => [event.actor, (JSON.parse(event.detail) as { kept_for?: string }).kept_for])).toEqual([
      ['alice', approval.id],
      ['alice', approval.id],
    ]);
    const approved = await ask('approve', { session_id: sessionId });
    expect(approved).toMatchObject({ status: 'completed', choices: [{ message: { content: 'Checked, briefly.' } }] });
    const prompt = ollama.workChats.at(-1)!.body.messages;
    expect(prompt.at(-2)!.content.split('\n')[0]).toBe('exit code 0');
    expect(prompt.at(-1)!.content).toBe('Corrections from the user while you work:\n1. Keep it brief.\n2. Say which shell ran it.');
  });

  it('is dropped when the Task that took the answer is cancelled before the model read it, and that Task’s trace says so', async () => {
    const ollama = stack.ollama;
    ollama.enqueue({ toolCalls: [{ name: 'run_command', arguments: { command: 'sleep 30' } }], promptEvalCount: 10, evalCount: 5 });
    const chat = new OpenAI({ baseURL: `${stack.base}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: as('alice') });
    const paused = (await chat.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'Wait a while.' }] } as never)) as unknown as Record<
      string,
      string
    >;
    const admin = (path: string) => fetch(`${stack.base}/admin/${path}`, { method: 'POST', headers: as('alice') });
    expect((await admin(`tasks/${paused.task_id}/steer?text=${encodeURIComponent('Then say done.')}`)).status).toBe(200);
    // MCP's agent_run answers the wait (approve), and its Task runs the approved command; the person cancels it meanwhile.
    const mcp = stack.closeOnStop(await modernClient(stack.service.url, as('alice')));
    const answering = fieldsOf(textOf(await mcp.callTool({ name: 'agent_run', arguments: { request: 'approve', session_id: paused.session_id } })));
    await pollUntil(
      async () =>
        (await probe<{ state: string }>(stack.database, "SELECT state FROM run_waits WHERE task_id = ? AND kind = 'approval'", paused.task_id))[0]?.state === 'taken'
          ? true
          : undefined,
      'the answering Task to take the pause',
    );
    expect((await admin(`tasks/${answering.task_id}/cancel`)).status).toBe(200);
    const detail = await pollUntil(async () => {
      const task = (await (await fetch(`${stack.base}/admin/tasks/${answering.task_id}`, { headers: as('alice') })).json()) as {
        status: string;
        trace: { kind: string; outcome: string; detail: Record<string, unknown> }[];
      };
      return task.status === 'cancelled' ? task : undefined;
    }, 'the answering Task to end cancelled');
    expect(await probe(stack.database, "SELECT body, state FROM run_waits WHERE task_id = ? AND kind = 'steer'", paused.task_id)).toEqual([
      { body: 'Then say done.', state: 'dropped' },
    ]);
    expect(detail.trace.filter((step) => step.kind === 'steer')).toEqual([
      expect.objectContaining({
        outcome: 'dropped',
        detail: expect.objectContaining({ count: 1, paused_task: paused.task_id, messages: [expect.objectContaining({ text: 'Then say done.' })] }),
      }),
    ]);
  });
});
