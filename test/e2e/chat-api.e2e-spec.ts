import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import OpenAI from 'openai';
import { count, probe, type DatabaseTarget } from '../support/database-probe.js';
import { modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { useStack } from '../support/e2e-stack.js';
import type { ServiceProcess } from '../support/service-process.js';
import { gate } from '../support/gate.js';

const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const MODEL = 'ollama-agent';

/** Every `data:` payload and comment line of an SSE body, in order. */
async function readSse(res: Response): Promise<string[]> {
  const text = await res.text();
  return text.split('\n\n').filter(Boolean);
}

describe('Chat API (OpenAI-compatible) with the official openai client', () => {
  const stack = useStack({
    config: {
      mcp: { images: { max_count: 2, max_bytes_per_image: 80, max_total_bytes: 120 } },
      queue: { progress_poll_ms: 20 },
      chat: { keepalive_ms: 50 },
    },
  });
  const ollama = stack.ollama;
  let service: ServiceProcess;
  let openai: OpenAI;
  let mcp: Client;
  let db: DatabaseTarget;
  let base: string;

  const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }], promptEvalCount: 10, evalCount: 5 });
  const waitTerminal = (taskId: string) => waitForTerminal(async (id) => textOf(await mcp.callTool({ name: 'agent_status', arguments: { task_id: id } })), taskId);

  beforeAll(async () => {
    ({ service, database: db, base } = stack);
    openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0 });
    mcp = stack.closeOnStop(await modernClient(service.url));
  });

  it('lists the agent and its direct mode (no tiers configured)', async () => {
    const models = [];
    for await (const model of openai.models.list()) models.push(model);
    expect(models).toEqual([
      { id: MODEL, object: 'model', created: expect.any(Number), owned_by: 'ollama-agent-mcp' },
      { id: `${MODEL}-direct`, object: 'model', created: expect.any(Number), owned_by: 'ollama-agent-mcp' },
    ]);
  });

  it('answers a completion once the Task is terminal; earlier messages become the new session’s history', async () => {
    ollama.enqueue({ content: 'The answer is 4.', promptEvalCount: 120, evalCount: 30, delayMs: 200 });
    const completion = await openai.chat.completions.create({
      model: MODEL,
      temperature: 0.3,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is 1+1?' },
        { role: 'assistant', content: '2' },
        { role: 'user', content: 'And 2+2?' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: 'The answer is 4.' }, finish_reason: 'stop' });
    expect(completion.usage).toEqual({ prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 });
    const extra = completion as unknown as { task_id: string; session_id: string; status: string; deliverables: string[] };
    expect(extra).toMatchObject({ status: 'completed', deliverables: [] });
    const sent = ollama.workChats.at(-1)!.body;
    expect(sent.messages.filter((m) => m.role !== 'system').map((m) => [m.role, m.content])).toEqual([
      ['user', 'Be brief.\n\nWhat is 1+1?'],
      ['assistant', '2'],
      ['user', 'And 2+2?'],
    ]);
    expect(sent.options).toMatchObject({ temperature: 0.3 });
    // The same Task, seen over MCP by the same user.
    expect(await waitTerminal(extra.task_id)).toMatchObject({ session_id: extra.session_id, status: 'completed', result: 'The answer is 4.' });

    ollama.enqueue({ content: 'Then 8.' });
    const next = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'And 4+4?' }], session_id: extra.session_id } as never);
    expect((next as unknown as { session_id: string }).session_id).toBe(extra.session_id);
    expect(
      ollama.workChats
        .at(-1)!
        .body.messages.filter((m) => m.role !== 'system')
        .map((m) => m.content),
    ).toEqual(['Be brief.\n\nWhat is 1+1?', '2', 'And 2+2?', 'The answer is 4.', 'And 4+4?']);
  });

  it('streams chunks: role and agent first, execution steps as they happen, the answer, finish reason and usage, [DONE]', async () => {
    ollama.enqueue(call('write_file', { path: 'notes/out.txt', content: 'hello' }), { content: 'Wrote the file.', promptEvalCount: 7, evalCount: 3, delayMs: 300 });
    const stream = await openai.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'write a file' }] });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    const first = chunks[0];
    expect(first.choices[0].delta).toMatchObject({ role: 'assistant', content: '', agent: { status: 'queued', task_id: expect.any(String), session_id: expect.any(String) } });
    const steps = chunks.flatMap((chunk) => chunk.choices[0].delta.agent_steps ?? []);
    const types = steps.map((step: { type: string }) => step.type);
    expect(types).toEqual(expect.arrayContaining(['model_call', 'file_op']));
    expect(steps.find((step: { type: string }) => step.type === 'file_op')).toMatchObject({ path: 'notes/out.txt', bytes: 5, created: true, status: 'ok' });
    // The content is the Task's result (with the agent's list of changed files), never the steps.
    const content = chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('');
    const { session_id: sessionId, task_id: taskId } = first.choices[0].delta.agent;
    const uri = `agent-session://${sessionId}/files/notes/out.txt`;
    expect(content).toBe(`Wrote the file.\n\nFiles created or changed:\n- notes/out.txt (created, 5 bytes) ${uri}\n\ndiff: agent-session://${sessionId}/tasks/${taskId}/diff`);
    expect((await waitTerminal(taskId)).result).toBe('Wrote the file.');
    const last = chunks.at(-1);
    expect(last.choices[0].finish_reason).toBe('stop');
    expect(last.usage).toEqual({ prompt_tokens: 17, completion_tokens: 8, total_tokens: 25 });
    expect(last).toMatchObject({ status: 'completed', deliverables: [uri], task_id: taskId });
  });

  it('ends the event stream with [DONE] and sends keep-alive comments while the Task waits (chat.keepalive_ms)', async () => {
    ollama.enqueue({ content: 'slow answer', delayMs: 600 });
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'slow' }] }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readSse(res);
    expect(events).toContain(': keep-alive');
    expect(events.at(-1)).toBe('data: [DONE]');
  });

  it('answers a failed Task with its reason and finish_reason "error", in both modes', async () => {
    ollama.enqueue({ garbage: true });
    const failed = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'fail please' }] });
    expect(failed.choices[0].finish_reason).toBe('error');
    expect((failed as unknown as { status: string }).status).toBe('failed');
    expect(failed.choices[0].message.content).toMatch(/Unexpected response from Ollama/);
    ollama.enqueue({ garbage: true });
    const chunks: any[] = [];
    for await (const chunk of await openai.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'fail' }] })) chunks.push(chunk);
    expect(chunks.at(-1)).toMatchObject({ status: 'failed', choices: [{ finish_reason: 'error' }] });
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('')).toMatch(/Unexpected response from Ollama/);
  });

  it('keeps running a Task whose client disconnected, and cancels a session’s running Task on request', async () => {
    // The model answers only once the client has gone: a timed delay could end the Task first.
    const gone = gate();
    ollama.enqueue({ content: 'finished anyway', heldUntil: gone.opened });
    const abort = new AbortController();
    let agent: { task_id: string; session_id: string } | undefined;
    try {
      const stream = await openai.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'leave early' }] }, { signal: abort.signal });
      try {
        for await (const chunk of stream) {
          agent = (chunk.choices[0].delta as { agent?: typeof agent }).agent;
          abort.abort();
        }
      } catch {
        // The abort ends the iteration.
      }
    } finally {
      gone.open();
    }
    expect(await waitTerminal(agent!.task_id)).toMatchObject({ status: 'completed', result: 'finished anyway' });

    ollama.enqueue({ hang: true });
    const chatsBefore = ollama.workChats.length;
    const hung = await openai.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'hang' }] });
    const chunks: any[] = [];
    for await (const chunk of hung as AsyncIterable<any>) {
      chunks.push(chunk);
      if (chunks.length === 1) {
        await ollama.waitForChats(chatsBefore + 1);
        const res = await fetch(`${base}/v1/chat/completions/${chunk.choices[0].delta.agent.session_id}/cancel`, { method: 'POST' });
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ object: 'chat.cancellation', tasks: [{ task_id: chunk.choices[0].delta.agent.task_id }] });
      }
    }
    expect(chunks.at(-1)).toMatchObject({ status: 'cancelled', choices: [{ finish_reason: 'error' }] });
    const unknown = await fetch(`${base}/v1/chat/completions/2a8105cc-84f9-4d37-a5bd-e48e04654eb7/cancel`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ type: 'invalid_request_error', code: 'session_not_found' });
  });

  it('passes an image_url data URL to the model as image bytes', async () => {
    ollama.capabilities = ['completion', 'vision'];
    ollama.enqueue({ content: 'a pixel' });
    const completion = await openai.chat.completions.create({
      model: MODEL,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_1x1}` } },
          ],
        },
      ],
    });
    expect(completion.choices[0].message.content).toBe('a pixel');
    expect(ollama.workChats.at(-1)!.body.messages.at(-1)).toMatchObject({ content: 'what is this?', images: [PNG_1x1] });
    const [audit] = await probe<{ detail: string }>(db, "SELECT detail FROM audit_events WHERE action = 'chat.completions' ORDER BY seq DESC LIMIT 1");
    expect(audit.detail).not.toContain(PNG_1x1);
  });

  const invalid: [string, Record<string, unknown>, string | null, RegExp][] = [
    ['an unknown model', { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }, 'model', /does not exist/],
    ['no messages', { model: MODEL, messages: [] }, 'messages', /non-empty array/],
    [
      'a last message that is not the user’s',
      {
        model: MODEL,
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'y' },
        ],
      },
      'messages[1].role',
      /last message must be the user/,
    ],
    ['an unknown role', { model: MODEL, messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role', /must be one of/],
    ['an empty request', { model: MODEL, messages: [{ role: 'user', content: '  ' }] }, 'messages[0].content', /must not be empty/],
    [
      'a remote image URL',
      {
        model: MODEL,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            ],
          },
        ],
      },
      'messages[0].content[1].image_url.url',
      /must be a data URL/,
    ],
    [
      'an unsupported image type',
      {
        model: MODEL,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'image_url', image_url: { url: `data:image/gif;base64,${PNG_1x1}` } },
            ],
          },
        ],
      },
      'messages[0].content',
      /mime_type: must be one of/,
    ],
    [
      'an image over the per-image limit',
      {
        model: MODEL,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'x' },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.alloc(81).toString('base64')}` } },
            ],
          },
        ],
      },
      'messages[0].content',
      /exceeds the per-image limit/,
    ],
    ['a temperature above 2', { model: MODEL, temperature: 3, messages: [{ role: 'user', content: 'x' }] }, 'temperature', /between 0.0 and 2.0/],
    ['a malformed session_id', { model: MODEL, session_id: 'nope', messages: [{ role: 'user', content: 'x' }] }, 'session_id', /must be a uuid/],
    ['an unknown session_id', { model: MODEL, session_id: '2a8105cc-84f9-4d37-a5bd-e48e04654eb7', messages: [{ role: 'user', content: 'x' }] }, 'session_id', /does not exist/],
    ['a string stream flag', { model: MODEL, stream: 'yes', messages: [{ role: 'user', content: 'x' }] }, 'stream', /boolean/],
  ];

  it.each(invalid)('refuses %s with a 400 in OpenAI’s error shape, stores nothing, and audits it', async (_name, body, param, message) => {
    const [tasks, sessions] = [await count(db, 'tasks'), await count(db, 'sessions')];
    const [{ last }] = await probe<{ last: number }>(db, 'SELECT COALESCE(MAX(seq), 0) AS last FROM audit_events');
    const error = await openai.chat.completions.create(body as never).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
    expect(bad.status).toBe(400);
    expect(bad.error).toMatchObject({ type: 'invalid_request_error', param, message: expect.stringMatching(message) });
    expect([await count(db, 'tasks'), await count(db, 'sessions')]).toEqual([tasks, sessions]);
    const events = await probe<{ action: string; outcome: string; transport: string }>(db, 'SELECT action, outcome, transport FROM audit_events WHERE seq > ?', last);
    expect(events).toEqual([{ action: 'chat.completions', outcome: 'rejected', transport: 'chat' }]);
  });

  it('refuses a body that is not JSON in OpenAI’s error shape, and a cross-site browser Origin at the HTTP edge', async () => {
    const notJson = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"model":' });
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    // The HTTP edge refuses a cross-site Origin for every route, before the Chat API sees the request.
    const crossSite = await fetch(`${base}/v1/models`, { headers: { Origin: 'https://evil.example' } });
    expect(crossSite.status).toBe(403);
    const [refusal] = await probe<{ action: string }>(db, 'SELECT action FROM audit_events ORDER BY seq DESC LIMIT 1');
    expect(refusal.action).toBe('http.request_rejected');
  });
});
