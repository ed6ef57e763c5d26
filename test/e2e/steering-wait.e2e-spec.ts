import { describe, expect, it } from '@jest/globals';
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import OpenAI from 'openai';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, httpRawDispatch, modernClient, tasksSession, textOf, type InputRequestHandler } from '../support/mcp-clients.js';

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
