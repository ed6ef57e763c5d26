import { beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import type { Client } from '@modelcontextprotocol/client';
import OpenAI from 'openai';
import { a2aMessage, a2aSend, a2aText } from '../support/a2a-clients.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { gate } from '../support/gate.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { ADMIN, as, PROXY_AUTH } from '../support/proxy-identity.js';
import { openBrowser } from '../support/browser.js';
import { pollUntil } from '../support/poll.js';

const MODEL = 'ollama-agent';
const CORRECTION = 'Correction from the user while you work:';
const SKIPPED = 'Not run: the user sent a correction (next message). Call it again if it still applies.';

/**
 * Steering (issue 35): a message for a conversation whose Task is running joins that Task, on A2A, the
 * Chat API, MCP (opt-in) and the console; the model reads it at the next step boundary; another user is
 * answered as for a missing Task or session. The first model call of each Task is held (a gate) so that
 * the correction surely arrives while the Task runs.
 */
describe('steering a running Task from every surface', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, queue: { progress_poll_ms: 20 }, agent: { steering: { mcp: true } } } });
  const ollama = stack.ollama;
  let db: DatabaseTarget;
  let base: string;
  let a2a: A2aClient;
  const mcp: Record<string, Client> = {};
  const chat: Record<string, OpenAI> = {};

  const status = async (taskId: string) => textOf(await mcp.alice.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
  const tasksOf = (sessionId: string) => probe<{ id: string; steer_count: number | string }>(db, 'SELECT id, steer_count FROM tasks WHERE session_id = ?', sessionId);
  const steerEvents = (taskId: string) =>
    probe<{ action: string; actor: string }>(db, "SELECT action, actor FROM audit_events WHERE action = 'conversation.steer' AND task_id = ? AND outcome = 'ok'", taskId);

  /** A Task of alice's (over MCP) whose first model call is held: a call of read_file a.txt once released. */
  async function runningTask(): Promise<{ taskId: string; sessionId: string; release: () => void }> {
    const held = gate();
    ollama.enqueue({ toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }], heldUntil: held.opened });
    const accepted = fieldsOf(textOf(await mcp.alice.callTool({ name: 'agent_run', arguments: { request: 'Read a.txt and summarise it.' } })));
    await ollama.until(() => ollama.activeChats === 1);
    return { taskId: accepted.task_id, sessionId: accepted.session_id, release: held.open };
  }

  /** Releases the held call, lets the Task end with `answer`, and returns the last prompt the model saw. */
  async function finish(task: { taskId: string; release: () => void }, answer: string) {
    ollama.enqueue({ content: answer });
    task.release();
    const done = await waitForTerminal(status, task.taskId);
    expect(done).toMatchObject({ status: 'completed', result: answer });
    return ollama.workChats.at(-1)!.body.messages;
  }

  beforeAll(async () => {
    ({ database: db, base } = stack);
    for (const user of ['alice', 'bob']) {
      mcp[user] = stack.closeOnStop(await modernClient(stack.service.url, as(user)));
      chat[user] = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: as(user) });
    }
    a2a = await new ClientFactory().createFromUrl(base);
  });

  it('A2A: SendMessage naming the working Task is a correction the model reads after the current step; no second Task', async () => {
    const task = await runningTask();
    const steer = {
      ...a2aSend([a2aText('Not a.txt: read b.txt.')], { returnImmediately: true }),
      message: { ...a2aMessage([a2aText('Not a.txt: read b.txt.')]), taskId: task.taskId },
    };
    const answered = (await a2a.sendMessage(steer, { serviceParameters: as('alice') })) as Task;
    expect(answered.id).toBe(task.taskId);
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(fieldsOf(await status(task.taskId)).message).toBe('タスクを実行しています。修正指示を1件受け取りました。');
    const prompt = await finish(task, 'Read b.txt instead.');
    // The held reply's call came after the correction: not run, and the correction follows as the person's words.
    expect(prompt.slice(-2).map((message) => [message.role, message.content.split('\n')[0]])).toEqual([
      ['tool', SKIPPED],
      ['user', CORRECTION],
    ]);
    expect(prompt.at(-1)!.content).toContain('Not a.txt: read b.txt.');
    expect(await tasksOf(task.sessionId)).toEqual([{ id: task.taskId, steer_count: 1 }]);
    expect(await steerEvents(task.taskId)).toEqual([{ action: 'conversation.steer', actor: 'alice' }]);
  });

  it('Chat API: agent_steer with the running Task’s session_id answers at once with agent_state steered; without it the request queues', async () => {
    const task = await runningTask();
    const steered = await chat.alice.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Use b.txt, not a.txt.' }],
      session_id: task.sessionId,
      agent_steer: true,
    } as never);
    expect(steered).toMatchObject({ task_id: task.taskId, session_id: task.sessionId, status: 'running', agent_state: 'steered', choices: [{ finish_reason: 'stop' }] });
    const prompt = await finish(task, 'Used b.txt.');
    expect(prompt.at(-1)!.content).toBe(`${CORRECTION}\nUse b.txt, not a.txt.`);
    expect(await tasksOf(task.sessionId)).toHaveLength(1);
    // After the Task ended the same flag makes the message the session's next Task, and the answer says so.
    ollama.enqueue({ content: 'Follow-up done.' });
    const followUp = await chat.alice.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'And c.txt.' }],
      session_id: task.sessionId,
      agent_steer: true,
    } as never);
    expect(followUp).toMatchObject({ session_id: task.sessionId, status: 'completed', agent_state: 'follow_up', choices: [{ message: { content: 'Follow-up done.' } }] });
    expect(await tasksOf(task.sessionId)).toHaveLength(2);
  });

  it('MCP (agent.steering.mcp): agent_run with the running session joins its Task and says so in the specified keys', async () => {
    const task = await runningTask();
    const joined = textOf(await mcp.alice.callTool({ name: 'agent_run', arguments: { request: 'Only the first line.', session_id: task.sessionId } }));
    expect(joined).toBe(
      [`task_id: ${task.taskId}`, `session_id: ${task.sessionId}`, 'status: running', `message: タスク ${task.taskId} は実行中のため、この依頼を修正指示として渡しました。`].join(
        '\n',
      ),
    );
    const prompt = await finish(task, 'The first line only.');
    expect(prompt.at(-1)!.content).toBe(`${CORRECTION}\nOnly the first line.`);
    expect(await tasksOf(task.sessionId)).toHaveLength(1);
  });

  it('console: the owner and an admin steer; another user is answered 404, and nothing reaches the Task', async () => {
    const task = await runningTask();
    const steer = (headers: Record<string, string>, text: string) =>
      fetch(`${base}/admin/tasks/${task.taskId}/steer?text=${encodeURIComponent(text)}`, { method: 'POST', headers });
    expect((await steer(as('bob'), 'bob was here')).status).toBe(404);
    const byOwner = await steer(as('alice'), 'Skip the tests.');
    expect(byOwner.status).toBe(200);
    expect(await byOwner.json()).toMatchObject({ task_id: task.taskId, status: expect.stringMatching(/planning|running/) });
    expect((await steer(ADMIN, 'Keep it short.')).status).toBe(200);
    const prompt = await finish(task, 'Short, no tests.');
    expect(prompt.at(-1)!.content).toBe(`Corrections from the user while you work:\n1. Skip the tests.\n2. Keep it short.`);
    expect(await steerEvents(task.taskId)).toEqual([
      { action: 'conversation.steer', actor: 'alice' },
      { action: 'conversation.steer', actor: 'carol@example.com' },
    ]);
  });

  it("console page: the running Task's box sends a correction the model reads", async () => {
    const task = await runningTask();
    const browser = stack.closeOnStop(await openBrowser());
    const page = await (await browser.newContext({ extraHTTPHeaders: as('alice') })).newPage();
    await page.goto(`${base}/admin#/tasks/${task.taskId}`);
    await page.fill('#steer-text', 'Answer in one line.');
    await page.click('#steer button[type=submit]');
    await pollUntil(async () => ((await tasksOf(task.sessionId))[0].steer_count === 1 ? true : undefined), 'the correction to be taken');
    const prompt = await finish(task, 'One line.');
    expect(prompt.at(-1)!.content).toBe(`${CORRECTION}\nAnswer in one line.`);
    expect(await steerEvents(task.taskId)).toEqual([{ action: 'conversation.steer', actor: 'alice' }]);
  });

  it('another user is refused on A2A, the Chat API and MCP exactly as for a missing Task or session', async () => {
    const task = await runningTask();
    const steer = { ...a2aSend([a2aText('mine now')], { returnImmediately: true }), message: { ...a2aMessage([a2aText('mine now')]), taskId: task.taskId } };
    await expect(a2a.sendMessage(steer, { serviceParameters: as('bob') })).rejects.toThrow(/Task not found/);
    await expect(
      chat.bob.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'mine now' }], session_id: task.sessionId, agent_steer: true } as never),
    ).rejects.toMatchObject({ status: 400, code: 'session_not_found' });
    const viaMcp = await mcp.bob.callTool({ name: 'agent_run', arguments: { request: 'mine now', session_id: task.sessionId } });
    expect(viaMcp.isError).toBe(true);
    const prompt = await finish(task, 'Summary of a.txt.');
    expect(prompt.some((message) => message.content.includes('mine now'))).toBe(false);
    expect(await tasksOf(task.sessionId)).toEqual([{ id: task.taskId, steer_count: 0 }]);
  });
});
