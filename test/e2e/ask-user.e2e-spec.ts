import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { statusText as statusOf, tasksGetUntil, withTasks as withTasksOn } from '../support/agent-tasks.js';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, httpRawDispatch, textOf, waitForTerminal, type RawDispatch } from '../support/mcp-clients.js';

const ask = (question: string, options: unknown) => ({ toolCalls: [{ name: 'ask_user', arguments: { question, options } }], promptEvalCount: 10, evalCount: 5 });

describe('ask_user: a question with choices pauses the run like an approval', () => {
  const stack = useStack({ config: { agent: { approvals: { mode: 'never', wait_ms: 60_000 } } } });
  const { ollama } = stack;
  let client: Client;
  let raw: RawDispatch;

  beforeAll(async () => {
    client = await stack.mcpClient();
    raw = httpRawDispatch(stack.service.url);
  });

  const submit = async (request: string, sessionId?: string) =>
    fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request, ...(sessionId ? { session_id: sessionId } : {}) } })));
  const statusText = (taskId: string) => statusOf(client, taskId);
  const finished = async (taskId: string) => {
    await waitForTerminal(statusText, taskId);
    return statusText(taskId);
  };
  const audit = (action: string, taskId: string) =>
    probe<{ detail: string }>(stack.database, 'SELECT detail FROM audit_events WHERE action = ? AND task_id = ? ORDER BY seq', action, taskId);
  const rows = (taskId: string) =>
    probe<{ tool: string; state: string; reason: string | null; options: string; answered_via: string | null }>(
      stack.database,
      'SELECT * FROM approvals WHERE task_id = ?',
      taskId,
    );
  const withTasks = (method: string, params: Record<string, unknown>) => withTasksOn(raw, method, params);
  const lastPrompt = () => ollama.workChats.at(-1)!.body.messages;

  it('ends the Task with the question and numbered options; the option number answers it and the same conversation goes on', async () => {
    ollama.enqueue(ask('Which language?', ['Python', 'Go']));
    const first = await submit('Write a hello world.');
    const text = await finished(first.task_id);
    expect(fieldsOf(text)).toMatchObject({ status: 'completed' });
    expect(text).toContain('Which language?\n\n1. Python\n2. Go');
    expect(text).toContain(`session_id (${first.session_id})`);
    expect(await rows(first.task_id)).toMatchObject([{ tool: 'ask_user', state: 'pending', options: '["Python","Go"]' }]);
    expect(JSON.parse((await audit('question.asked', first.task_id))[0].detail)).toMatchObject({ question: 'Which language?', options: ['Python', 'Go'], in_place: false });

    ollama.enqueue({ content: 'Here it is in Go.' });
    const second = await submit('2', first.session_id);
    expect(fieldsOf(await finished(second.task_id))).toMatchObject({ status: 'completed', result: 'Here it is in Go.' });
    expect(lastPrompt().at(-1)).toMatchObject({ role: 'tool', tool_name: 'ask_user', content: 'The user chose: Go' });
    expect(
      lastPrompt()
        .filter((message) => message.role === 'user')
        .map((message) => message.content),
    ).toEqual(['Write a hello world.']);
    expect(await rows(first.task_id)).toMatchObject([{ state: 'granted', reason: 'Go', answered_via: 'conversation' }]);
    expect(JSON.parse((await audit('question.answered', first.task_id))[0].detail)).toMatchObject({ answer: 'choice', answer_task_id: second.task_id });
  });

  it('takes an option by its text, and anything else as a new instruction', async () => {
    ollama.enqueue(ask('Tabs or spaces?', ['Tabs', 'Spaces']));
    const first = await submit('Format the file.');
    await finished(first.task_id);
    ollama.enqueue({ content: 'Using spaces.' });
    await finished((await submit('  spaces ', first.session_id)).task_id);
    expect(lastPrompt().at(-1)!.content).toBe('The user chose: Spaces');

    ollama.enqueue(ask('Which one?', ['A', 'B']));
    const third = await submit('Pick for me.', first.session_id);
    await finished(third.task_id);
    ollama.enqueue({ content: 'Doing C.' });
    await finished((await submit('Neither, do C.', first.session_id)).task_id);
    expect(lastPrompt().slice(-2)).toMatchObject([
      { role: 'tool', tool_name: 'ask_user', content: 'The user did not choose an option and gave a new instruction instead (next message).' },
      { role: 'user', content: 'Neither, do C.' },
    ]);
    expect(JSON.parse((await audit('question.declined', third.task_id))[0].detail)).toMatchObject({ answer: 'instruction' });
  });

  it('answers a question without 2 to 6 options with an error the model can act on', async () => {
    ollama.enqueue(ask('Sure?', ['yes']), { content: 'went ahead' });
    const taskId = (await submit('Do it.')).task_id;
    expect(fieldsOf(await finished(taskId))).toMatchObject({ status: 'completed', result: 'went ahead' });
    expect(lastPrompt().at(-1)!.content).toMatch(/^Error: options must hold 2 to 6 different choices/);
    expect(await rows(taskId)).toEqual([]);
  });

  it('waits in place for a Tasks-extension client: input_required with a form whose property is an enum of the options', async () => {
    ollama.enqueue(ask('Which database?', ['SQLite', 'PostgreSQL', 'none']), { content: 'PostgreSQL it is.' });
    const created = await withTasks('tools/call', { name: 'agent_run', arguments: { request: 'Set up storage.' } });
    const taskId = (created as { result: { taskId: string } }).result.taskId;
    const waiting = await tasksGetUntil(raw, taskId, ['input_required'], 15_000);
    const [key] = Object.keys(waiting.inputRequests);
    expect(waiting.inputRequests[key].params).toMatchObject({
      mode: 'form',
      message: 'The agent asks: Which database?\n\n1. SQLite\n2. PostgreSQL\n3. none',
      requestedSchema: { type: 'object', properties: { choice: { type: 'string', enum: ['SQLite', 'PostgreSQL', 'none'] } }, required: ['choice'] },
    });
    expect(fieldsOf(await statusText(taskId)).current_task).toBe('question: Which database?');
    // Not one of the options: ignored, as the extension requires for a malformed answer.
    await withTasks('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { choice: 'MySQL' } } } });
    expect((await rows(taskId))[0].state).toBe('pending');
    await withTasks('tasks/update', { taskId, inputResponses: { [key]: { action: 'accept', content: { choice: 'PostgreSQL' } } } });
    expect(fieldsOf(await finished(taskId))).toMatchObject({ status: 'completed', result: 'PostgreSQL it is.' });
    expect(lastPrompt().at(-1)).toMatchObject({ role: 'tool', tool_name: 'ask_user', content: 'The user chose: PostgreSQL' });
    expect(await rows(taskId)).toMatchObject([{ state: 'granted', reason: 'PostgreSQL', answered_via: 'in_place' }]);
  });
});
