import { beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import OpenAI from 'openai';
import { a2aSend, a2aText } from '../support/a2a-clients.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';

const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }], promptEvalCount: 10, evalCount: 5 });
const answerOf = (task: Task) => task.artifacts.find((artifact) => artifact.name === 'answer')?.parts[0]?.content;

/** Issue 36: texts a person reads outside MCP follow Accept-Language (ja or en, English otherwise); each surface names its own way to answer. */
describe('Accept-Language on the Chat API and A2A; MCP keeps mcp.locale', () => {
  const stack = useStack({ config: { agent: { approvals: { mode: 'commands' } } } });
  const { ollama } = stack;
  let base: string;

  const chat = (language?: string) => new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: language ? { 'Accept-Language': language } : {} });
  const a2a = (language: string): Promise<Client> => {
    const fetchImpl: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), 'Accept-Language': language } });
    return new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    ).createFromUrl(base);
  };
  type Paused = { choices: { message: { content: string } }[]; session_id: string; agent_input: { message: string; options: string[] } };

  beforeAll(() => {
    base = stack.base;
  });

  it('Chat, Accept-Language: en: the approval prompt is English, names the Chat way to answer (never agent_run), and "approve" answers it', async () => {
    ollama.enqueue(call('run_command', { command: 'echo hi' }));
    const paused = (await chat('en').chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'Run echo' }] })) as unknown as Paused;
    const text = paused.choices[0].message.content;
    expect(text).toContain('Approval needed. The agent wants to do the following.');
    expect(text).toContain(`send "approve" as the next message of this conversation (session_id ${paused.session_id})`);
    expect(text).not.toMatch(/agent_run|承認/);
    expect(paused.agent_input).toMatchObject({ message: expect.stringContaining('The agent wants to run this command. Approve?'), options: ['approve', 'deny'] });
    ollama.enqueue({ content: 'It printed hi.' });
    const done = (await chat('en').chat.completions.create({
      model: 'ollama-agent',
      messages: [{ role: 'user', content: 'approve' }],
      session_id: paused.session_id,
    } as never)) as unknown as Paused;
    expect(done.choices[0].message.content).toBe('It printed hi.');
  });

  it('Chat: ja gets Japanese (q-values weighed), another language or none gets English', async () => {
    const languages: [string | undefined, 'ja' | 'en'][] = [
      ['ja', 'ja'],
      ['ja-JP,en;q=0.5', 'ja'],
      ['en;q=0.4, ja;q=0.9', 'ja'],
      ['fr', 'en'],
      [undefined, 'en'],
    ];
    for (const [language, expected] of languages) {
      ollama.enqueue(call('run_command', { command: 'echo hi' }));
      const paused = (await chat(language).chat.completions.create({ model: 'ollama-agent', messages: [{ role: 'user', content: 'Run echo' }] })) as unknown as Paused;
      const text = paused.choices[0].message.content;
      if (expected === 'ja') {
        expect([language, text]).toEqual([
          language,
          expect.stringContaining(`承認するには、この会話 (session_id ${paused.session_id}) の次のメッセージとして「承認」を送ってください。`),
        ]);
        expect(paused.agent_input).toMatchObject({
          message: expect.stringContaining('エージェントが次のコマンドを実行しようとしています。承認しますか?'),
          options: ['承認', '拒否'],
        });
      } else {
        expect([language, text]).toEqual([language, expect.stringContaining('Approval needed.')]);
        expect(paused.agent_input.options).toEqual(['approve', 'deny']);
      }
      expect(text).not.toContain('agent_run');
    }
  });

  it('A2A, Accept-Language: en and ja: the answer and the input-required message name the contextId, in that language', async () => {
    ollama.enqueue(call('run_command', { command: 'echo hi' }));
    const english = (await (await a2a('en')).sendMessage(a2aSend([a2aText('Run echo')]))) as Task;
    expect(english.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const answer = answerOf(english);
    expect(answer?.$case).toBe('text');
    expect(answer?.value).toContain('send "approve" as a new message with this Task\'s contextId');
    expect(answer?.value).not.toMatch(/agent_run|承認/);
    expect(english.status?.message?.parts[0]?.content?.value).toContain('The agent wants to run this command. Approve?');
    expect(english.status?.message?.parts[0]?.content?.value).toContain('1. approve\n2. deny');

    ollama.enqueue(call('run_command', { command: 'echo hi' }));
    const japanese = (await (await a2a('ja')).sendMessage(a2aSend([a2aText('Run echo')]))) as Task;
    expect(answerOf(japanese)?.value).toContain('承認するには、この Task と同じ contextId で「承認」という新しいメッセージを送ってください。');
    expect(japanese.status?.message?.parts[0]?.content?.value).toContain('1. 承認\n2. 拒否');
    expect(japanese.status?.message?.parts[0]?.content?.value).toContain(`同じ contextId (${japanese.contextId})`);
  });

  it('MCP keeps mcp.locale (the spec’s Japanese) whatever the client’s Accept-Language', async () => {
    const client = stack.closeOnStop(await modernClient(stack.service.url, { 'Accept-Language': 'en' }));
    ollama.enqueue(call('run_command', { command: 'echo hi' }));
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'Run echo' } })));
    const status = async (id: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } }));
    await waitForTerminal(status, accepted.task_id);
    const text = await status(accepted.task_id);
    expect(text).toContain('承認が必要です');
    expect(text).toContain('agent_run');
  });
});
