import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import OpenAI from 'openai';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import type { Browser } from 'playwright-core';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';
import { openBrowser } from '../support/browser.js';
import { pollUntil } from '../support/poll.js';

const ask = (question: string, options: unknown) => ({ toolCalls: [{ name: 'ask_user', arguments: { question, options } }], promptEvalCount: 10, evalCount: 5 });
const answerOf = (task: Task) => task.artifacts.find((artifact) => artifact.name === 'answer')?.parts[0]?.content;

describe('A Task paused for a person shows as waiting for input on A2A and the Chat API; the next message answers it', () => {
  const stack = useStack({ config: { queue: { progress_poll_ms: 20 }, agent: { approvals: { mode: 'never' } } } });
  const ollama = stack.ollama;
  let a2a: Client;
  let openai: OpenAI;
  let db: DatabaseTarget;
  let base: string;

  const rows = (taskId: string) => probe<{ state: string; reason: string | null; answered_via: string | null }>(db, 'SELECT * FROM approvals WHERE task_id = ?', taskId);
  const lastPrompt = () => ollama.workChats.at(-1)!.body.messages;

  beforeAll(async () => {
    ({ database: db, base } = stack);
    a2a = await new ClientFactory().createFromUrl(base);
    openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  it('A2A: the Task is input-required with the question and numbered options; a message in its context answers it and the Task then reads completed', async () => {
    ollama.enqueue(ask('Which language?\u202e', ['Python', 'Go']));
    const first = (await a2a.sendMessage(a2aSend([a2aText('Write a hello world.')]))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const message = first.status?.message;
    const shown = message?.parts[0]?.content;
    expect(shown?.$case).toBe('text');
    expect(shown?.value).toContain('The agent asks: Which language?\\u202e\n\n1. Python\n2. Go');
    expect(shown?.value).toContain(`contextId (${first.contextId})`);
    expect(message?.metadata).toMatchObject({ input_request: { kind: 'question', options: ['Python', 'Go'] } });
    expect(first.metadata).toMatchObject({ status: 'completed' });
    expect((await a2a.getTask({ id: first.id, historyLength: 0, tenant: '' })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    ollama.enqueue({ content: 'Here it is in Go.' });
    const second = (await a2a.sendMessage(a2aSend([a2aText('2')], { contextId: first.contextId }))) as Task;
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(second)).toEqual({ $case: 'text', value: 'Here it is in Go.' });
    expect(lastPrompt().at(-1)).toMatchObject({ role: 'tool', tool_name: 'ask_user', content: 'The user chose: Go' });
    expect(await rows(first.id)).toMatchObject([{ state: 'granted', reason: 'Go', answered_via: 'conversation' }]);
    expect((await a2a.getTask({ id: first.id, historyLength: 0, tenant: '' })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('Chat API: finish_reason stop with agent_state input_required and the options (completion and last chunk); the next message answers it', async () => {
    ollama.enqueue(ask('Tabs or spaces?', ['Tabs', 'Spaces']));
    const first = (await openai.chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'Format the file.' }] })) as unknown as Record<
      string,
      unknown
    > & {
      choices: { finish_reason: string; message: { content: string } }[];
      session_id: string;
      task_id: string;
    };
    expect(first.choices[0].finish_reason).toBe('stop');
    expect(first.choices[0].message.content).toContain('1. Tabs\n2. Spaces');
    expect(first).toMatchObject({
      agent_state: 'input_required',
      agent_input: { kind: 'question', message: expect.stringContaining('Tabs or spaces?'), options: ['Tabs', 'Spaces'] },
    });

    ollama.enqueue({ content: 'Using spaces.' });
    const chunks: Record<string, unknown>[] = [];
    const stream = await openai.chat.completions.create({
      model: 'ollama-agent',
      stream: true,
      messages: [{ role: 'user', content: 'Spaces' }],
      session_id: first.session_id,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    for await (const chunk of stream) chunks.push(chunk as unknown as Record<string, unknown>);
    const last = chunks.at(-1)!;
    expect(last).toMatchObject({ choices: [{ finish_reason: 'stop' }] });
    expect(last.agent_state).toBeUndefined();
    expect(lastPrompt().at(-1)).toMatchObject({ role: 'tool', tool_name: 'ask_user', content: 'The user chose: Spaces' });
    expect(await rows(first.task_id)).toMatchObject([{ state: 'granted', reason: 'Spaces', answered_via: 'conversation' }]);
  });

  it('Chat API streaming: the last chunk of a paused Task says input_required with the options', async () => {
    ollama.enqueue(ask('Proceed?', ['Yes', 'No']));
    const chunks: Record<string, unknown>[] = [];
    const stream = await openai.chat.completions.create({ model: 'ollama-agent', stream: true, messages: [{ role: 'user', content: 'Deploy.' }] });
    for await (const chunk of stream) chunks.push(chunk as unknown as Record<string, unknown>);
    expect(chunks.at(-1)).toMatchObject({ choices: [{ finish_reason: 'stop' }], agent_state: 'input_required', agent_input: { kind: 'question', options: ['Yes', 'No'] } });
  });
});

describe('The console shows a pending question with its options as text; its owner answers it with an option', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, queue: { progress_poll_ms: 20 }, agent: { approvals: { mode: 'never' } } } });
  const ollama = stack.ollama;
  const ALICE = as('alice@example.com');
  let browser: Browser;

  const chat = async (content: string, headers: Record<string, string>, sessionId?: string) =>
    (await (
      await fetch(`${stack.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'ollama-agent', messages: [{ role: 'user', content }], ...(sessionId ? { session_id: sessionId } : {}) }),
      })
    ).json()) as { task_id: string; session_id: string; agent_input: { approval_id: string } };
  const choose = (id: string, option: number, headers: Record<string, string>) => fetch(`${stack.base}/admin/approvals/${id}/choices/${option}`, { method: 'POST', headers });
  const audits = (action: string) => probe<{ outcome: string; actor: string }>(stack.database, 'SELECT outcome, actor FROM audit_events WHERE action = ? ORDER BY seq', action);

  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(async () => browser?.close());

  it('refuses another user and an option that does not exist (audited); the page lists the options as text and a click answers by number', async () => {
    ollama.enqueue(ask('Which <b>db</b>?', ['<img src=x onerror=alert(1)>', 'Postgres']));
    const first = await chat('Set up storage.', ALICE);
    const id = first.agent_input.approval_id;
    expect((await choose(id, 1, as('bob@example.com'))).status).toBe(404);
    expect((await choose(id, 3, ALICE)).status).toBe(404);
    expect((await choose(id, 0, ALICE)).status).toBe(400);
    expect((await audits('console.question_answer')).filter((row) => row.outcome !== 'ok').length).toBeGreaterThanOrEqual(3);

    const context = await browser.newContext({ extraHTTPHeaders: ALICE });
    const page = await context.newPage();
    await page.goto(`${stack.base}/admin#/tasks/${first.task_id}`);
    const section = page.locator('section.card', { hasText: 'Pending approvals' });
    await section.waitFor();
    expect(await section.locator('.question').textContent()).toBe('The agent asks: Which <b>db</b>?');
    expect(await section.locator('ol.options li').allTextContents()).toEqual(['<img src=x onerror=alert(1)>', 'Postgres']);
    expect(await section.locator('img').count()).toBe(0);
    ollama.enqueue({ content: 'Postgres it is.' });
    await section.locator('button.choice', { hasText: '2. Postgres' }).click();
    await page.waitForFunction(() => !document.querySelector('section.card button.choice'));
    await context.close();

    const approval = () => probe<{ state: string; reason: string; answer_task_id: string }>(stack.database, 'SELECT state, reason, answer_task_id FROM approvals WHERE id = ?', id);
    // The answer is the session's next turn: its Task takes the question when it runs.
    const row = await pollUntil(async () => ((await approval())[0].state === 'pending' ? undefined : (await approval())[0]), `approval ${id} decided by the answer's Task`);
    expect(row).toMatchObject({ state: 'granted', reason: 'Postgres' });
    const [answer] = await probe<{ request: string }>(stack.database, 'SELECT request FROM tasks WHERE id = ?', row.answer_task_id);
    // The choice itself continues the run; the new turn's request is a note for people, not the number.
    expect(answer).toMatchObject({ request: 'Answered the agent\'s question "Which <b>db</b>?": Postgres' });
    expect(await audits('console.question_answer')).toContainEqual({ outcome: 'ok', actor: 'alice@example.com' });
  });
});
