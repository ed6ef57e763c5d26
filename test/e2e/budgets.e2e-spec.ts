import { beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import type { Client } from '@modelcontextprotocol/client';
import OpenAI from 'openai';
import { a2aMessage, a2aSend, a2aText } from '../support/a2a-clients.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import type { ScriptedReply } from '../support/scripted-ollama.js';

const MODEL = 'ollama-agent';
const SUMMARY = 'Read some of the files; the rest is left to do.';

/** A model that never stops calling tools (each call distinct, so the repeat limit is not what stops it). */
const runaway = (count: number, extra: ScriptedReply = {}): ScriptedReply[] =>
  Array.from({ length: count }, (_, index) => ({ toolCalls: [{ name: 'read_file', arguments: { path: `notes/${index}.txt` } }], promptEvalCount: 10, evalCount: 5, ...extra }));

/**
 * Budgets (issue 35): a scripted runaway Task stops at each budget (set per request on the Chat API and
 * A2A, or by the round limit in the config), asks the model once for a summary without tools, and
 * completes with it; agent_status's message names the limit. And a split request whose plan is written
 * as strings runs as sequential subtasks.
 */
describe('budgets end runaway Tasks with a summary; plans written as strings run in order', () => {
  const stack = useStack({ config: { queue: { progress_poll_ms: 20 }, agent: { max_rounds_per_task: 6 } } });
  const ollama = stack.ollama;
  let db: DatabaseTarget;
  let mcp: Client;
  let chat: OpenAI;
  let a2a: A2aClient;

  const status = async (taskId: string) => fieldsOf(textOf(await mcp.callTool({ name: 'agent_status', arguments: { task_id: taskId } })));
  const stoppedBy = async (taskId: string) => (await probe<{ stopped_by: string | null }>(db, 'SELECT stopped_by FROM tasks WHERE id = ?', taskId))[0].stopped_by;
  /** The summary call: no tools offered, and the limit named as the last instruction. */
  const expectSummaryCall = (limit: string) => {
    const last = ollama.workChats.at(-1)!.body;
    expect(last.tools ?? []).toEqual([]);
    expect(last.messages.at(-1)!.content).toMatch(new RegExp(`^The task has reached its limit ${limit} .*Do not call any tools`));
  };

  beforeAll(async () => {
    db = stack.database;
    mcp = stack.closeOnStop(await modernClient(stack.service.url));
    chat = new OpenAI({ baseURL: `${stack.base}/v1`, apiKey: 'unused', maxRetries: 0 });
    a2a = await new ClientFactory().createFromUrl(stack.base);
  });

  it.each([
    ['max_tool_calls', { max_tool_calls: 2 }, runaway(2)],
    ['max_model_calls', { max_model_calls: 2 }, runaway(2)],
    // Each call takes 1.8 s (the scripted delay before the answer and half of it between its halves): the second is cut off in flight at 3 s; the summary follows.
    ['max_wall_ms', { max_wall_ms: 3000 }, runaway(2, { delayMs: 1200 })],
  ])('Chat agent_budget %s: the Task completes with the summary, and agent_status names the limit', async (limit, budget, script) => {
    ollama.enqueue(...script, { content: SUMMARY });
    const completion = (await chat.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Read every note.' }],
      agent_budget: budget,
    } as never)) as unknown as {
      task_id: string;
      status: string;
      choices: { message: { content: string } }[];
    };
    expect(completion).toMatchObject({ status: 'completed', choices: [{ message: { content: SUMMARY } }] });
    expectSummaryCall(limit);
    expect(await stoppedBy(completion.task_id)).toBe(limit);
    expect((await status(completion.task_id)).message).toBe(`タスクが完了しました。上限 ${limit} に達したため、ツールの実行を止めて要約で回答しました。`);
  });

  it('A2A metadata agentBudget maxTokens: the same, on A2A', async () => {
    ollama.enqueue(...runaway(2, { promptEvalCount: 600 }), { content: SUMMARY });
    const send = a2aSend([a2aText('Read every note.')]);
    const task = (await a2a.sendMessage({ ...send, message: { ...a2aMessage([a2aText('Read every note.')]), metadata: { agentBudget: { maxTokens: 1000 } } } })) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expectSummaryCall('max_tokens');
    expect(await stoppedBy(task.id)).toBe('max_tokens');
  });

  it('the round limit of the config ends the same way instead of failing the Task', async () => {
    ollama.enqueue(...runaway(6), { content: SUMMARY });
    const accepted = fieldsOf(textOf(await mcp.callTool({ name: 'agent_run', arguments: { request: 'Read every note.' } })));
    const done = await waitForTerminal(async (id) => textOf(await mcp.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
    expect(done).toMatchObject({ status: 'completed', result: SUMMARY });
    expectSummaryCall('max_rounds_per_task');
  });

  it('refuses a malformed budget with the field named, and stores nothing', async () => {
    const before = (await probe<{ n: number | string }>(db, 'SELECT COUNT(*) AS n FROM tasks'))[0].n;
    await expect(chat.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], agent_budget: { max_tool_calls: -1 } } as never)).rejects.toMatchObject({
      status: 400,
      param: 'agent_budget',
      message: expect.stringContaining('agent_budget.max_tool_calls: must be a positive integer'),
    });
    await expect(chat.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], agent_budget: { tokens: 5 } } as never)).rejects.toMatchObject({
      status: 400,
      param: 'agent_budget',
    });
    expect((await probe<{ n: number | string }>(db, 'SELECT COUNT(*) AS n FROM tasks'))[0].n).toBe(before);
  });

  it('a split request whose plan is a list of strings shows completed_tasks x/y, its subtasks in order', async () => {
    const plan = { toolCalls: [{ name: 'plan', arguments: { subtasks: ['Read math.js', 'Fix add()', 'Run node test.mjs'] } }], promptEvalCount: 10, evalCount: 5 };
    const done = (id: string) => ({ toolCalls: [{ name: 'plan', arguments: { done: id } }], promptEvalCount: 10, evalCount: 5 });
    ollama.enqueue(plan, done('s1'), done('s2'), done('s3'), { content: 'Fixed and tested.' });
    const accepted = fieldsOf(textOf(await mcp.callTool({ name: 'agent_run', arguments: { request: 'Fix add() in math.js and run the test.' } })));
    const final = await waitForTerminal(async (id) => textOf(await mcp.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
    expect(final).toMatchObject({ status: 'completed', completed_tasks: '3/3', result: 'Fixed and tested.' });
    const instructions = ollama.workChats
      .at(-1)!
      .body.messages.filter((message) => message.role === 'tool' && message.tool_name === 'plan')
      .map((message) => message.content.split('\n').find((line) => line.startsWith('Subtask ')) ?? message.content.split('\n')[0]);
    expect(instructions).toEqual([
      'Subtask 1/3 (s1): Read math.js',
      'Subtask 2/3 (s2): Fix add()',
      'Subtask 3/3 (s3): Run node test.mjs',
      expect.stringMatching(/^All subtasks are done/),
    ]);
  });
  it('thinking on (qwen3, think: true): a plan written inside its reasoning runs, its subtasks in dependency order', async () => {
    // qwen3 (8b, Ollama 0.9+ with think: true) at times writes its call inside <think>: Ollama's parser then
    // returns it in message.thinking, with no tool_calls and an empty content (the scripted server does the same).
    ollama.capabilities = ['completion', 'tools', 'thinking'];
    try {
      const before = ollama.workChats.length;
      const subtasks = [
        { id: 'check', title: 'Run the test', instructions: 'Run node test.mjs.', depends_on: ['fix'] },
        { id: 'fix', title: 'Fix it', instructions: 'Fix add().', depends_on: ['read'] },
        { id: 'read', title: 'Read the code', instructions: 'Read math.js.', depends_on: [] },
      ];
      const plan = `The user wants add() fixed and the test run. Three steps.\n<tool_call>\n${JSON.stringify({ name: 'plan', arguments: { subtasks } })}\n</tool_call>`;
      const done = (id: string) => ({ toolCalls: [{ name: 'plan', arguments: { done: id } }], thinking: `${id} is done.`, promptEvalCount: 10, evalCount: 5 });
      ollama.enqueue({ thinking: plan, content: '', promptEvalCount: 10, evalCount: 40 }, done('read'), done('fix'), done('check'), {
        content: 'Fixed and tested.',
        thinking: 'All done.',
      });
      const accepted = fieldsOf(textOf(await mcp.callTool({ name: 'agent_run', arguments: { request: 'Fix add() in math.js and run the test.' } })));
      const final = await waitForTerminal(async (id) => textOf(await mcp.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
      expect(final).toMatchObject({ status: 'completed', completed_tasks: '3/3', result: 'Fixed and tested.' });
      const chats = ollama.workChats.slice(before);
      expect(chats).toHaveLength(5);
      expect(chats.every((chat) => chat.body.think === true)).toBe(true);
      const instructions = chats
        .at(-1)!
        .body.messages.filter((message) => message.role === 'tool' && message.tool_name === 'plan')
        .map((message) => message.content.split('\n').find((line) => line.startsWith('Subtask ')) ?? message.content.split('\n')[0]);
      expect(instructions).toEqual([
        'Subtask 1/3 (read): Read the code',
        'Subtask 2/3 (fix): Fix it',
        'Subtask 3/3 (check): Run the test',
        expect.stringMatching(/^All subtasks are done/),
      ]);
    } finally {
      ollama.capabilities = ['completion', 'tools'];
    }
  });
});
