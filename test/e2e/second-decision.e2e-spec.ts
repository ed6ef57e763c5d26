import { beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import type { Client } from '@modelcontextprotocol/client';
import OpenAI from 'openai';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';

const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }], promptEvalCount: 10, evalCount: 5 });

/**
 * Issue 36: a decision is a decision on every surface. A decision sent as a message (Chat, A2A, MCP agent_run)
 * decides the session's request with the Task it becomes; a second one is refused and queues nothing.
 */
describe('a second decision is refused and queues nothing (Chat, A2A, MCP)', () => {
  const stack = useStack({ config: { agent: { approvals: { mode: 'commands' } } } });
  const { ollama } = stack;
  let db: DatabaseTarget;
  let openai: OpenAI;
  let a2a: A2aClient;
  let mcp: Client;

  const tasksOf = async (session: string) => Number((await probe<{ n: number }>(db, 'SELECT COUNT(*) AS n FROM tasks WHERE session_id = ?', session))[0].n);
  const approvals = (session: string) =>
    probe<{ state: string; answer_task_id: string | null }>(db, 'SELECT state, answer_task_id FROM approvals WHERE session_id = ? ORDER BY created_at', session);

  beforeAll(async () => {
    db = stack.database;
    openai = new OpenAI({ baseURL: `${stack.base}/v1`, apiKey: 'unused', maxRetries: 0 });
    a2a = await new ClientFactory().createFromUrl(stack.base);
    mcp = stack.closeOnStop(await modernClient(stack.service.url));
  });

  it('Chat: two "approve" at once: one continues the run, the other is 409 already_decided; a later "approve" too', async () => {
    ollama.enqueue(call('run_command', { command: 'echo hi' }));
    const paused = (await openai.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'Run echo' }] })) as unknown as { session_id: string };
    const session = paused.session_id;
    const before = await tasksOf(session);
    ollama.enqueue({ content: 'It printed hi.' });
    const approve = () => openai.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'approve' }], session_id: session } as never);
    const both = await Promise.allSettled([approve(), approve()]);
    const refused = both.filter((result) => result.status === 'rejected').map((result) => (result.reason as { status: number; code: string }) ?? {});
    expect(refused.map((error) => [error.status, error.code])).toEqual([[409, 'already_decided']]);
    const done = both.find((result) => result.status === 'fulfilled') as PromiseFulfilledResult<{ choices: { message: { content: string } }[] }>;
    expect(done.value.choices[0].message.content).toBe('It printed hi.');
    expect(await tasksOf(session)).toBe(before + 1);
    await expect(approve()).rejects.toMatchObject({ status: 409 });
    expect(await tasksOf(session)).toBe(before + 1);
    expect(await approvals(session)).toEqual([{ state: 'granted', answer_task_id: expect.any(String) }]);
    // Anything else is a new request, as before.
    ollama.enqueue({ content: 'Sure.' });
    const next = await openai.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'Now say sure' }], session_id: session } as never);
    expect(next.choices[0].message.content).toBe('Sure.');
  });

  it('A2A: a second "approve" in the context is refused, and no Task is made for it', async () => {
    ollama.enqueue(call('run_command', { command: 'echo hi' }));
    const paused = (await a2a.sendMessage(a2aSend([a2aText('Run echo')]))) as Task;
    expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    ollama.enqueue({ content: 'It printed hi.' });
    const approved = (await a2a.sendMessage(a2aSend([a2aText('approve')], { contextId: paused.contextId }))) as Task;
    expect(approved.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const before = await tasksOf(paused.contextId);
    await expect(a2a.sendMessage(a2aSend([a2aText('approve')], { contextId: paused.contextId }))).rejects.toThrow(/already decided/);
    expect(await tasksOf(paused.contextId)).toBe(before);
  });

  it('MCP agent_run: a second 承認 is a tool error (Already decided) and queues nothing', async () => {
    const status = async (id: string) => textOf(await mcp.callTool({ name: 'agent_status', arguments: { task_id: id } }));
    ollama.enqueue(call('run_command', { command: 'echo hi' }));
    const paused = fieldsOf(textOf(await mcp.callTool({ name: 'agent_run', arguments: { request: 'Run echo' } })));
    await waitForTerminal(status, paused.task_id);
    ollama.enqueue({ content: 'It printed hi.' });
    const approved = fieldsOf(textOf(await mcp.callTool({ name: 'agent_run', arguments: { request: '承認', session_id: paused.session_id } })));
    await waitForTerminal(status, approved.task_id);
    const before = await tasksOf(paused.session_id);
    const again = await mcp.callTool({ name: 'agent_run', arguments: { request: '承認', session_id: paused.session_id } });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/^Already decided: approval [0-9a-f-]+ was already decided; nothing was done/);
    expect(await tasksOf(paused.session_id)).toBe(before);
  });
});
