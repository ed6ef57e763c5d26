import { beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Message, type Part, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { randomUUID } from 'node:crypto';
import { a2aList, a2aSend, a2aText } from '../support/a2a-clients.js';
import { count, probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { gate } from '../support/gate.js';

const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const text = a2aText;
const send = a2aSend;
const answerOf = (task: Task) => task.artifacts.find((artifact) => artifact.name === 'answer')?.parts[0]?.content;

describe('A2A 1.0 with the official @a2a-js/sdk client', () => {
  const stack = useStack({ config: { queue: { progress_poll_ms: 20 }, mcp: { images: { max_count: 2, max_bytes_per_image: 80, max_total_bytes: 120 } } } });
  const ollama = stack.ollama;
  let client: Client;
  let db: DatabaseTarget;
  let base: string;

  beforeAll(async () => {
    ({ database: db, base } = stack);
    client = await new ClientFactory().createFromUrl(base);
  });

  it('serves an honest Agent Card: JSON-RPC at /a2a (1.0 and 0.3), streaming, the execute_task and direct_llm skills, text and image input, no scheme in auth.mode none', async () => {
    const card = await (await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json();
    expect(card).toMatchObject({
      name: 'ollama-agent-mcp',
      version: expect.any(String),
      supportedInterfaces: [
        { url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: `${base}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
      capabilities: { streaming: true, pushNotifications: false },
      defaultInputModes: ['text/plain', 'image/png', 'image/jpeg', 'image/webp', 'application/pdf', 'text/csv', 'application/octet-stream'],
      skills: [{ id: 'execute_task' }, { id: 'direct_llm' }],
    });
    expect(card.securitySchemes ?? {}).toEqual({});
    expect(client.protocolVersion).toBe('1.0');
  });

  it('SendMessage blocks until the Task is terminal; a second message continues the context', async () => {
    ollama.enqueue({ content: 'first answer', promptEvalCount: 11, evalCount: 4, delayMs: 200 }, { content: 'second answer' });
    const first = (await client.sendMessage(send([text('first question')]))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(first)).toEqual({ $case: 'text', value: 'first answer' });
    expect(first.metadata).toMatchObject({ status: 'completed', token_usage: { input: 11, output: 4, total: 15 } });
    const [row] = await probe<{ session_id: string; status: string }>(db, 'SELECT session_id, status FROM tasks WHERE id = ?', first.id);
    expect(row).toEqual({ session_id: first.contextId, status: 'completed' });

    const second = (await client.sendMessage(send([text('second question')], { contextId: first.contextId }))) as Task;
    expect(second.contextId).toBe(first.contextId);
    expect(answerOf(second)).toEqual({ $case: 'text', value: 'second answer' });
    expect(
      ollama.workChats
        .at(-1)!
        .body.messages.filter((m) => m.role !== 'system')
        .map((m) => m.content),
    ).toEqual(['first question', 'first answer', 'second question']);
  });

  it('SendStreamingMessage: the submitted Task, WORKING updates with the trace steps, the artifacts, then COMPLETED', async () => {
    // The answer comes once the stream has sent a WORKING update: a timed delay could end the Task before the
    // stream first read it, and it would then send only the end.
    const working = gate();
    ollama.enqueue(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a2a/out.txt', content: 'hi' } }], promptEvalCount: 3, evalCount: 2 },
      { content: 'wrote it', heldUntil: working.opened },
    );
    const events = [];
    try {
      for await (const event of client.sendMessageStream(send([text('write a file')]))) {
        events.push(event.payload!);
        if (event.payload?.$case === 'statusUpdate' && (event.payload.value as { status?: { state: TaskState } }).status?.state === TaskState.TASK_STATE_WORKING) working.open();
      }
    } finally {
      working.open();
    }
    // The first event is the Task as stored when it is sent: submitted, or already being worked on.
    expect(events[0]).toMatchObject({ $case: 'task', value: { id: expect.any(String) } });
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain((events[0].value as Task).status?.state);
    const updates = events.filter((event) => event.$case === 'statusUpdate').map((event) => event.value as { status: { state: TaskState; message?: Message } });
    expect(updates.some((update) => update.status.state === TaskState.TASK_STATE_WORKING)).toBe(true);
    const steps = updates.flatMap((update) => (update.status.message?.metadata?.agent_steps as { type: string }[] | undefined) ?? []);
    expect(steps.map((step) => step.type)).toEqual(expect.arrayContaining(['model_call', 'file_op']));
    const artifacts = events.filter((event) => event.$case === 'artifactUpdate').map((event) => (event.value as { artifact: { name: string; parts: Part[] } }).artifact);
    // The answer streams in chunks (push.e2e-spec.ts); the deliverables come whole at the end.
    expect([...new Set(artifacts.map((artifact) => artifact.name))]).toEqual(['answer', 'deliverables']);
    expect(artifacts.at(-1)!.parts[0]).toMatchObject({
      filename: 'a2a/out.txt',
      content: { $case: 'url', value: expect.stringMatching(/^agent-session:\/\/[0-9a-f-]{36}\/files\/a2a\/out\.txt$/) },
    });
    expect(updates.at(-1)!.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('GetTask and ListTasks read the caller’s Tasks; returnImmediately answers the submitted Task; CancelTask cancels it', async () => {
    ollama.enqueue({ hang: true });
    const chatsBefore = ollama.workChats.length;
    const submitted = (await client.sendMessage(send([text('hang around')], { returnImmediately: true }))) as Task;
    expect(submitted.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    await ollama.waitForChats(chatsBefore + 1);
    const running = await client.getTask({ tenant: '', id: submitted.id, historyLength: undefined });
    expect(running.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    const listed = await client.listTasks(a2aList(submitted.contextId, 10));
    expect(listed.tasks.map((task) => task.id)).toEqual([submitted.id]);
    expect(listed.totalSize).toBe(1);
    const cancelled = await client.cancelTask({ tenant: '', id: submitted.id, metadata: {} });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ tenant: '', id: submitted.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.getTask({ tenant: '', id: randomUUID(), historyLength: undefined })).rejects.toThrow(/not found/i);
  });

  it('takes images as file parts with bytes, by agent_run’s rules; refuses remote files and bad images, storing nothing', async () => {
    ollama.capabilities = ['completion', 'vision'];
    ollama.enqueue({ content: 'a pixel' });
    const image: Part = { content: { $case: 'raw', value: Buffer.from(PNG_1x1, 'base64') }, mediaType: 'image/png', filename: 'p.png', metadata: {} };
    const seen = (await client.sendMessage(send([text('what is it?'), image]))) as Task;
    expect(answerOf(seen)).toEqual({ $case: 'text', value: 'a pixel' });
    expect(ollama.workChats.at(-1)!.body.messages.at(-1)!.images).toEqual([PNG_1x1]);
    const before = [await count(db, 'tasks'), await count(db, 'sessions')];
    const remote: Part = { content: { $case: 'url', value: 'https://example.com/x.png' }, mediaType: 'image/png', filename: '', metadata: {} };
    await expect(client.sendMessage(send([text('x'), remote]))).rejects.toThrow(/must be text, or a file with its bytes/);
    const gif: Part = { ...image, mediaType: 'image/gif' };
    await expect(client.sendMessage(send([text('x'), gif]))).rejects.toThrow(/declared as image\/gif, but its content is image\/png/);
    expect([await count(db, 'tasks'), await count(db, 'sessions')]).toEqual(before);
    const rejected = await probe<{ action: string; transport: string }>(db, "SELECT action, transport FROM audit_events WHERE outcome = 'rejected' AND action = 'a2a SendMessage'");
    expect(rejected).toHaveLength(2);
    expect(rejected.every((event) => event.transport === 'a2a')).toBe(true);
  });

  it('serves message/send-era (v0.3) clients: no A2A-Version header, parts with kind', async () => {
    ollama.enqueue({ content: 'legacy answer' });
    const res = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'old client' }] } },
      }),
    });
    const body = await res.json();
    expect(body.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    expect(JSON.stringify(body.result.artifacts)).toContain('legacy answer');
  });
});
