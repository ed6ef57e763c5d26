import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { readFileSync } from 'node:fs';
import { AGENT_RUN_INPUT_SCHEMA, AGENT_STATUS_INPUT_SCHEMA } from '../../src/tools/tool-schemas.js';
import { count, probe } from '../support/database-probe.js';
import { E2E_DATABASE } from '../support/databases.js';
import type { DatabaseTarget } from '../support/database-probe.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { useStack } from '../support/e2e-stack.js';
import type { ServiceProcess } from '../support/service-process.js';
import { gate } from '../support/gate.js';

const ADMIN_TOKEN = 'metrics-scraper-token-0123456789';
const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('MCP 2026-07-28 over HTTP with the v2 SDK client (no Tasks extension)', () => {
  const stack = useStack({ config: { mcp: { images: { max_count: 2, max_bytes_per_image: 80, max_total_bytes: 120 } }, auth: { admin_token: ADMIN_TOKEN } } });
  const ollama = stack.ollama;
  let service: ServiceProcess;
  let client: Client;
  let db: DatabaseTarget;

  const run = async (args: Record<string, unknown>) => client.callTool({ name: 'agent_run', arguments: args });
  const status = async (taskId: string, sessionId?: string) =>
    textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId, ...(sessionId ? { session_id: sessionId } : {}) } }));

  beforeAll(async () => {
    ({ service, database: db } = stack);
    client = stack.closeOnStop(await modernClient(service.url));
  });

  it('negotiates 2026-07-28 and advertises the Tasks extension', async () => {
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(client.getServerCapabilities()?.extensions).toEqual({ 'io.modelcontextprotocol/tasks': {} });
  });

  it('lists exactly the two tools with the spec schemas byte for byte and the spec annotations', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['agent_run', 'agent_status']);
    expect(JSON.stringify(tools[0].inputSchema)).toBe(JSON.stringify(AGENT_RUN_INPUT_SCHEMA));
    expect(JSON.stringify(tools[1].inputSchema)).toBe(JSON.stringify(AGENT_STATUS_INPUT_SCHEMA));
    expect(tools[0].annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: false });
    expect(tools[1].annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    expect(tools.every((tool) => !('execution' in tool))).toBe(true);
  });

  it('accepts agent_run with the §2.4 text, then agent_status reports the completed Task in the §3.4 format', async () => {
    ollama.enqueue({ content: '修正とテストが完了しました。', promptEvalCount: 2048, evalCount: 512, delayMs: 300 });
    const accepted = await run({ request: 'プロジェクトのテスト失敗を調査してください。', temperature: 0.2 });
    expect(accepted.isError).toBeFalsy();
    expect(accepted.structuredContent).toBeUndefined();
    const text = textOf(accepted);
    const { task_id: taskId, session_id: sessionId } = fieldsOf(text);
    expect(text).toBe([`task_id: ${taskId}`, `session_id: ${sessionId}`, 'status: queued', `message: タスク ${taskId} をセッション ${sessionId} に登録しました。`].join('\n'));
    const final = await waitForTerminal((id) => status(id), taskId);
    expect(await status(taskId)).toBe(
      [
        `task_id: ${taskId}`,
        `session_id: ${sessionId}`,
        'status: completed',
        'completed_tasks: 1/1',
        'current_task:',
        'token_usage: input=2048 output=512 total=2560',
        'critical_path_tokens: 0',
        'message: タスクが完了しました。',
        'result: 修正とテストが完了しました。',
      ].join('\n'),
    );
    expect(final.status).toBe('completed');
    const chat = ollama.workChats.at(-1)!.body;
    expect(chat.options).toMatchObject({ temperature: 0.2, num_ctx: 32768 });
    expect(chat.keep_alive).toBe('30m');
  });

  it('shows running progress while the chat is in flight', async () => {
    // The chat answers once agent_status has been read (a timed delay raced it).
    const read = gate();
    ollama.enqueue({ content: 'slow', heldUntil: read.opened, promptEvalCount: 1, evalCount: 1 });
    const chatsBefore = ollama.workChats.length;
    const { task_id: taskId } = fieldsOf(textOf(await run({ request: 'slow one' })));
    try {
      await ollama.waitForChats(chatsBefore + 1);
      const running = fieldsOf(await status(taskId));
      expect(running).toMatchObject({ status: 'running', completed_tasks: '0/1', current_task: 'ollama chat', message: 'タスクを実行しています。' });
    } finally {
      read.open();
    }
    await waitForTerminal((id) => status(id), taskId);
  });

  it('continues a session: earlier turns go to the model as context, and the global temperature applies', async () => {
    ollama.enqueue({ content: 'first answer' }, { content: 'second answer' });
    const first = fieldsOf(textOf(await run({ request: 'first question' })));
    await waitForTerminal((id) => status(id), first.task_id);
    const second = fieldsOf(textOf(await run({ request: 'second question', session_id: first.session_id })));
    expect(second.session_id).toBe(first.session_id);
    await waitForTerminal((id) => status(id), second.task_id);
    const messages = ollama.workChats.at(-1)!.body.messages.filter((m) => m.role !== 'system');
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'first question'],
      ['assistant', 'first answer'],
      ['user', 'second question'],
    ]);
    expect(ollama.workChats.at(-1)!.body.options).toMatchObject({ temperature: 0.7 });
    expect(fieldsOf(await status(second.task_id, first.session_id)).status).toBe('completed');
  });

  it('answers the §3.4 not-found text for an unknown task_id or a mismatched session_id', async () => {
    const unknown = '00000000-0000-0000-0000-000000000000';
    const result = await client.callTool({ name: 'agent_status', arguments: { task_id: unknown } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe(`task_id: ${unknown}\nstatus: failed\nmessage: タスク ${unknown} が見つかりません。`);
    const { task_id: taskId } = fieldsOf(textOf(await run({ request: 'owned' })));
    const other = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
    expect(await status(taskId, other)).toBe(`task_id: ${taskId}\nstatus: failed\nmessage: タスク ${taskId} が見つかりません。`);
    await waitForTerminal((id) => status(id), taskId);
  });

  const imageOf = (bytes: number) => Buffer.alloc(bytes, 7).toString('base64');
  const invalidCases: [string, Record<string, unknown>, RegExp][] = [
    ['an unknown property', { request: 'x', extra: 1 }, /unknown property "extra"/],
    ['a missing request', {}, /request: required/],
    ['an empty request', { request: '' }, /request: must not be empty/],
    ['a whitespace-only request', { request: ' \n\t ' }, /request: must not be empty/],
    ['a non-string request', { request: 42 }, /request: must be string/],
    ['a malformed session_id', { request: 'x', session_id: 'not-a-uuid' }, /session_id: must be a uuid/],
    ['an unknown session_id', { request: 'x', session_id: '2a8105cc-84f9-4d37-a5bd-e48e04654eb7' }, /session 2a8105cc-84f9-4d37-a5bd-e48e04654eb7 does not exist/],
    ['temperature below 0.0', { request: 'x', temperature: -0.1 }, /temperature: must be between 0.0 and 2.0/],
    ['temperature above 2.0', { request: 'x', temperature: 2.01 }, /temperature: must be between 0.0 and 2.0/],
    ['a string temperature', { request: 'x', temperature: '1' }, /temperature: must be number,null/],
    ['a null image element', { request: 'x', images: [null] }, /images\[0\]: must be an object/],
    ['a null mime_type', { request: 'x', images: [{ mime_type: null, data_base64: PNG_1x1 }] }, /images\[0\]\.mime_type: must not be null/],
    ['a null data_base64', { request: 'x', images: [{ mime_type: 'image/png', data_base64: null }] }, /images\[0\]\.data_base64: must not be null/],
    ['a missing data_base64', { request: 'x', images: [{ mime_type: 'image/png' }] }, /data_base64: required/],
    ['an unsupported MIME type', { request: 'x', images: [{ mime_type: 'image/gif', data_base64: PNG_1x1 }] }, /mime_type: must be one of image\/png, image\/jpeg, image\/webp/],
    ['invalid Base64', { request: 'x', images: [{ mime_type: 'image/png', data_base64: 'not base64!' }] }, /data_base64: must be non-empty, valid Base64/],
    ['an image over the per-image limit', { request: 'x', images: [{ mime_type: 'image/png', data_base64: imageOf(81) }] }, /81 bytes exceeds the per-image limit of 80 bytes/],
    [
      'images over the total limit',
      {
        request: 'x',
        images: [
          { mime_type: 'image/png', data_base64: imageOf(70) },
          { mime_type: 'image/png', data_base64: imageOf(70) },
        ],
      },
      /total size exceeds the limit of 120 bytes/,
    ],
    ['too many images', { request: 'x', images: [1, 2, 3].map(() => ({ mime_type: 'image/png', data_base64: imageOf(4) })) }, /at most 2 images/],
  ];

  it.each(invalidCases)('rejects %s as a Tool error, stores nothing, and audits the rejection', async (_name, args, message) => {
    const tasksBefore = await count(db, 'tasks');
    const sessionsBefore = await count(db, 'sessions');
    const [{ last: auditBefore }] = await probe<{ last: number }>(db, 'SELECT COALESCE(MAX(seq), 0) AS last FROM audit_events');
    const result = await run(args);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(await count(db, 'tasks')).toBe(tasksBefore);
    expect(await count(db, 'sessions')).toBe(sessionsBefore);
    const events = await probe<{ action: string; outcome: string; detail: string }>(db, 'SELECT action, outcome, detail FROM audit_events WHERE seq > ?', auditBefore);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ action: 'tools/call agent_run', outcome: 'rejected' });
    expect(events[0].detail).not.toContain(PNG_1x1);
  });

  it('passes images to a vision model, and stores only their size and SHA-256 in the audit log', async () => {
    ollama.capabilities = ['completion', 'vision'];
    ollama.enqueue({ content: 'a red pixel' });
    const { task_id: taskId } = fieldsOf(textOf(await run({ request: 'what is this?', images: [{ mime_type: 'image/png', data_base64: PNG_1x1 }] })));
    expect((await waitForTerminal((id) => status(id), taskId)).result).toBe('a red pixel');
    expect(ollama.workChats.at(-1)!.body.messages.at(-1)!.images).toEqual([PNG_1x1]);
    const audit = await probe<{ detail: string }>(db, 'SELECT detail FROM audit_events WHERE task_id = ? ORDER BY seq', taskId);
    expect(audit.map((row) => row.detail).join('')).not.toContain(PNG_1x1);
    expect(JSON.parse(audit[0].detail).images[0]).toMatchObject({ mimeType: 'image/png', bytes: 70 });
    expect(JSON.parse(audit[0].detail).images[0].sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('never lets an image string name a server file (the ollama client reads strings that are paths)', async () => {
    ollama.capabilities = ['completion', 'vision'];
    const pathShaped = '/etc///group'; // valid Base64 (12 characters of the alphabet) and an existing path
    // A tool round (through the text tool protocol: this model lacks tools), then the answer: two calls.
    ollama.enqueue({ content: '<tool_call>{"name": "list_dir", "arguments": {}}</tool_call>' }, { content: 'looked' });
    const before = ollama.chats.length;
    const { task_id: taskId } = fieldsOf(textOf(await run({ request: 'look', images: [{ mime_type: 'image/png', data_base64: pathShaped }] })));
    expect((await waitForTerminal((id) => status(id), taskId)).status).toBe('completed');
    // Every call of the Task carries the submitted bytes, never the file's.
    const sent = ollama.chats.slice(before).map((chat) => chat.body.messages.find((message) => message.images)!.images);
    expect(sent).toEqual([[pathShaped], [pathShaped]]);
    expect(JSON.stringify(sent)).not.toContain(readFileSync('/etc/group').toString('base64'));
  });

  it('fails an image Task on a model without vision before any chat call', async () => {
    ollama.capabilities = ['completion', 'tools'];
    const chatsBefore = ollama.workChats.length;
    const { task_id: taskId } = fieldsOf(textOf(await run({ request: 'look', images: [{ mime_type: 'image/png', data_base64: PNG_1x1 }] })));
    const final = await waitForTerminal((id) => status(id), taskId);
    expect(final.status).toBe('failed');
    expect(final.message).toBe('タスクが失敗しました。');
    expect(final.result).toMatch(/does not support image input/);
    expect(ollama.workChats.length).toBe(chatsBefore);
  });

  it('fails a Task on repeated Ollama HTTP 500s with a clear reason, and the worker goes on with the next Task', async () => {
    const crash = { status: 500, error: 'llama runner crashed' };
    ollama.enqueue(crash, crash, crash, { content: 'next one fine' });
    const failing = fieldsOf(textOf(await run({ request: 'will fail' })));
    const next = fieldsOf(textOf(await run({ request: 'will pass' })));
    const failed = await waitForTerminal((id) => status(id), failing.task_id);
    expect(failed.status).toBe('failed');
    expect(failed.result).toMatch(/Ollama returned HTTP 500: llama runner crashed/);
    expect((await waitForTerminal((id) => status(id), next.task_id)).result).toBe('next one fine');
  });

  it('runs one Task at a time, in submission order', async () => {
    const chatsBefore = ollama.workChats.length;
    ollama.setFallback({ content: 'ok', delayMs: 80, promptEvalCount: 1, evalCount: 1 });
    const accepted = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => run({ request: `parallel ${n}` })));
    const ids = accepted.map((result) => fieldsOf(textOf(result)).task_id);
    for (const id of ids) expect((await waitForTerminal((taskId) => status(taskId), id)).status).toBe('completed');
    expect(ollama.maxConcurrentChats).toBe(1);
    const order = await probe<{ id: string }>(db, `SELECT id FROM tasks WHERE id IN (${ids.map(() => '?').join(',')}) ORDER BY started_at`, ...ids);
    const submitted = await probe<{ id: string }>(db, `SELECT id FROM tasks WHERE id IN (${ids.map(() => '?').join(',')}) ORDER BY seq`, ...ids);
    expect(order).toEqual(submitted);
    expect(ollama.workChats.length - chatsBefore).toBe(6);
    ollama.setFallback({ content: 'scripted answer', promptEvalCount: 10, evalCount: 5 });
  });

  it('records every state change of a Task in the audit log', async () => {
    const { task_id: taskId } = fieldsOf(textOf(await run({ request: 'audited' })));
    await waitForTerminal((id) => status(id), taskId);
    const events = await probe<{ action: string; detail: string }>(db, 'SELECT action, detail FROM audit_events WHERE task_id = ? ORDER BY seq', taskId);
    expect(events.map((event) => event.action)).toEqual(expect.arrayContaining(['tools/call agent_run', 'task.status', 'tools/call agent_status']));
    const statuses = events.filter((event) => event.action === 'task.status').map((event) => JSON.parse(event.detail).status);
    expect(statuses).toEqual(['planning', 'running', 'completed']);
  });

  // The sabotage below works on the SQLite file; the PostgreSQL pass skips it.
  (E2E_DATABASE === 'sqlite' ? it : it.skip)('fails an action whose audit event cannot be written, stores nothing for it, and counts it (T4.7)', async () => {
    const failures = async () => {
      const metrics = await (await fetch(`${service.url.replace(/\/mcp$/, '')}/admin/metrics`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
      return Number(/^audit_write_failures_total (\d+)$/m.exec(metrics)![1]);
    };
    const failuresBefore = await failures();
    const { default: Database } = await import('better-sqlite3');
    const sabotage = new Database((db as { path: string }).path);
    sabotage.exec('ALTER TABLE audit_head RENAME TO audit_head_moved');
    try {
      const tasksBefore = await count(db, 'tasks');
      const result = await client.callTool({ name: 'agent_run', arguments: { request: 'must not run unaudited' } }).catch((error: Error) => ({ rpcError: error.message }));
      expect(JSON.stringify(result)).toMatch(/error|Internal/i);
      expect(JSON.stringify(result)).not.toMatch(/status: queued/);
      expect(await count(db, 'tasks')).toBe(tasksBefore);
      // The accepting event and the pipeline's own record of the failure: neither could be written.
      expect(await failures()).toBeGreaterThan(failuresBefore);
    } finally {
      sabotage.exec('ALTER TABLE audit_head_moved RENAME TO audit_head');
      sabotage.close();
    }
    const after = fieldsOf(textOf(await run({ request: 'audited again' })));
    expect(after.status).toBe('queued');
    await waitForTerminal((id) => status(id), after.task_id);
  });
});
