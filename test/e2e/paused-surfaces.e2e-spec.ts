import { beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import OpenAI from 'openai';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';

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
