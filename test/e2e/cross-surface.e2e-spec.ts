import { beforeAll, describe, expect, it } from '@jest/globals';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import OpenAI from 'openai';
import { randomUUID } from 'node:crypto';
import { a2aList, a2aSend, a2aText } from '../support/a2a-clients.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { CLIENT_INFO, fieldsOf, MODERN, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { useStack } from '../support/e2e-stack.js';
import type { ServiceProcess } from '../support/service-process.js';

const MODEL = 'ollama-agent';
const as = (user: string) => ({ 'X-Forwarded-User': user });
const a2aSendText = (text: string, contextId = '') => a2aSend([a2aText(text)], { contextId });

/**
 * One agent, three surfaces (MCP, Chat API, A2A) behind an SSO proxy: one user's session continues
 * across all of them and stays invisible to another user, and Tasks from all three share one queue.
 */
describe('MCP, Chat API and A2A on one queue, one session model, one identity', () => {
  const stack = useStack({ config: { auth: { mode: 'proxy_headers', trusted_proxies: ['127.0.0.1/32', '::1/128'] }, queue: { progress_poll_ms: 20 } } });
  const ollama = stack.ollama;
  let service: ServiceProcess;
  let configFile: string;
  let db: DatabaseTarget;
  let a2a: A2aClient;
  let base: string;
  const mcp: Record<string, Client> = {};
  const chat: Record<string, OpenAI> = {};

  const status = async (user: string, taskId: string) => textOf(await mcp[user].callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
  const userMessages = () =>
    ollama.workChats
      .at(-1)!
      .body.messages.filter((m) => m.role !== 'system')
      .map((m) => m.content);

  beforeAll(async () => {
    ({ service, database: db, base } = stack);
    configFile = stack.config.file;
    for (const user of ['alice', 'bob']) {
      mcp[user] = stack.closeOnStop(await modernClient(service.url, as(user)));
      chat[user] = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0, defaultHeaders: as(user) });
    }
    a2a = await new ClientFactory().createFromUrl(base);
  });

  it('continues one session from MCP to the Chat API to A2A for its owner, and hides it from everyone else on all three', async () => {
    ollama.enqueue({ content: 'answer over MCP' }, { content: 'answer over the Chat API' }, { content: 'answer over A2A' });
    const accepted = fieldsOf(textOf(await mcp.alice.callTool({ name: 'agent_run', arguments: { request: 'asked over MCP' } })));
    await waitForTerminal((id) => status('alice', id), accepted.task_id);
    const sessionId = accepted.session_id;

    const completion = await chat.alice.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'asked over the Chat API' }], session_id: sessionId } as never);
    expect(completion).toMatchObject({ session_id: sessionId, status: 'completed', choices: [{ message: { content: 'answer over the Chat API' } }] });
    expect(userMessages()).toEqual(['asked over MCP', 'answer over MCP', 'asked over the Chat API']);

    const task = (await a2a.sendMessage(a2aSendText('asked over A2A', sessionId), { serviceParameters: as('alice') })) as Task;
    expect(task).toMatchObject({ contextId: sessionId, status: { state: TaskState.TASK_STATE_COMPLETED } });
    expect(userMessages()).toEqual(['asked over MCP', 'answer over MCP', 'asked over the Chat API', 'answer over the Chat API', 'asked over A2A']);
    // Each surface's Task is the same durable Task on the others.
    expect(fieldsOf(await status('alice', task.id))).toMatchObject({ session_id: sessionId, status: 'completed', result: 'answer over A2A' });
    const viaA2a = await a2a.getTask({ tenant: '', id: (completion as unknown as { task_id: string }).task_id, historyLength: undefined }, { serviceParameters: as('alice') });
    expect(viaA2a.artifacts[0].parts[0].content).toEqual({ $case: 'text', value: 'answer over the Chat API' });
    const listed = await a2a.listTasks(a2aList(sessionId, 10), { serviceParameters: as('alice') });
    expect(listed.tasks).toHaveLength(3);

    // Bob sees none of it, on any surface, exactly as if it did not exist.
    expect(fieldsOf(await status('bob', task.id)).message).toMatch(/が見つかりません/);
    await expect(chat.bob.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hijack' }], session_id: sessionId } as never)).rejects.toMatchObject({
      status: 400,
      code: 'session_not_found',
    });
    const cancel = await fetch(`http://127.0.0.1:${service.port}/v1/chat/completions/${sessionId}/cancel`, { method: 'POST', headers: as('bob') });
    expect(cancel.status).toBe(404);
    await expect(a2a.getTask({ tenant: '', id: task.id, historyLength: undefined }, { serviceParameters: as('bob') })).rejects.toThrow(/not found/i);
    await expect(a2a.cancelTask({ tenant: '', id: task.id, metadata: {} }, { serviceParameters: as('bob') })).rejects.toThrow(/not found/i);
    expect((await a2a.listTasks(a2aList(), { serviceParameters: as('bob') })).tasks).toEqual([]);
    // Issue 43: Alice's session id as Bob's A2A contextId is only a name, Bob's own: a new conversation
    // of his, with none of her turns, and her conversation is unchanged.
    ollama.enqueue({ content: 'answer to bob' });
    const bobs = (await a2a.sendMessage(a2aSendText('hijack', sessionId), { serviceParameters: as('bob') })) as Task;
    expect(bobs).toMatchObject({ contextId: sessionId, status: { state: TaskState.TASK_STATE_COMPLETED } });
    expect(bobs.metadata?.session_id).not.toBe(sessionId);
    expect(userMessages()).toEqual(['hijack']);
    expect((await a2a.listTasks(a2aList(sessionId, 10), { serviceParameters: as('alice') })).tasks).toHaveLength(3);
    expect(await probe(db, "SELECT session_id FROM tasks WHERE owner = 'bob'")).toEqual([{ session_id: bobs.metadata?.session_id }]);
  });

  it('refuses Chat API and A2A calls without an identity from the proxy, as /mcp does', async () => {
    const base = `http://127.0.0.1:${service.port}`;
    const chatRes = await fetch(`${base}/v1/models`);
    expect(chatRes.status).toBe(401);
    expect((await chatRes.json()).error).toMatchObject({ type: 'authentication_error' });
    const a2aRes = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: randomUUID() } }),
    });
    expect(a2aRes.status).toBe(401);
    expect((await a2aRes.json()).error.message).toMatch(/Unauthorized/);
  });

  it('runs one Task at a time, in arrival order, when all three surfaces submit at once', async () => {
    ollama.setFallback({ content: 'done', delayMs: 60, promptEvalCount: 1, evalCount: 1 });
    ollama.maxConcurrentChats = 0;
    const requests = Array.from({ length: 4 }, (_, n) => n);
    const results = await Promise.all([
      ...requests.map((n) =>
        mcp.alice
          .callTool({ name: 'agent_run', arguments: { request: `mcp ${n}` } })
          .then((result) => waitForTerminal((id) => status('alice', id), fieldsOf(textOf(result)).task_id, 60_000)),
      ),
      ...requests.map((n) =>
        chat.alice.chat.completions
          .create({ model: MODEL, messages: [{ role: 'user', content: `chat ${n}` }] })
          .then((done) => ({ status: (done as unknown as { status: string }).status })),
      ),
      ...requests.map((n) =>
        a2a
          .sendMessage(a2aSendText(`a2a ${n}`), { serviceParameters: as('alice') })
          .then((done) => ({ status: (done as Task).status?.state === TaskState.TASK_STATE_COMPLETED ? 'completed' : 'other' })),
      ),
    ]);
    expect(results.map((result) => result.status)).toEqual(Array(12).fill('completed'));
    expect(ollama.maxConcurrentChats).toBe(1);
    const order = await probe<{ seq: number; started_at: string }>(
      db,
      "SELECT seq, started_at FROM tasks WHERE request LIKE 'mcp %' OR request LIKE 'chat %' OR request LIKE 'a2a %' ORDER BY seq",
    );
    const starts = order.map((row) => row.started_at);
    expect(starts).toEqual([...starts].sort());
  }, 90_000);

  it('audits every surface with its transport: mcp-http, chat, a2a, and stdio', async () => {
    const stdio = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
    await stdio.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['dist/stdio.js'],
        cwd: service.root,
        env: { PATH: process.env.PATH ?? '', AGENT_CONFIG: configFile },
        stderr: 'pipe',
      }),
    );
    await stdio.callTool({ name: 'agent_status', arguments: { task_id: randomUUID() } });
    await stdio.close();
    const rows = await probe<{ action: string; transport: string }>(db, 'SELECT DISTINCT action, transport FROM audit_events');
    const transportOf = (action: string) => [...new Set(rows.filter((row) => row.action === action).map((row) => row.transport))].sort();
    expect(transportOf('tools/call agent_run')).toEqual(['mcp-http']);
    expect(transportOf('tools/call agent_status')).toEqual(['mcp-http', 'stdio']);
    expect(transportOf('chat.completions')).toEqual(['chat']);
    expect(transportOf('a2a SendMessage')).toEqual(['a2a']);
    expect(transportOf('a2a GetTask')).toEqual(['a2a']);
    expect(transportOf('a2a ListTasks')).toEqual(['a2a']);
  }, 60_000);
});
