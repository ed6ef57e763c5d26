import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { statusText } from '../support/agent-tasks.js';
import { fieldsOf, modernMeta, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { Listen, SUBSCRIPTION_ID } from '../support/listen-client.js';
import { as } from '../support/proxy-identity.js';
import { useProxiedStack } from '../support/proxy-service.js';
import type { ServiceProcess } from '../support/service-process.js';
import { gate } from '../support/gate.js';

const ALICE = as('alice@example.com');
const BOB = as('bob@example.com');

describe('MCP subscriptions/listen: pushed Task status and resource notifications (issue 23)', () => {
  const stack = useProxiedStack({ config: { queue: { progress_poll_ms: 5000 } } });
  const { ollama } = stack;
  let service: ServiceProcess;
  let alice: Client;
  let bob: Client;

  beforeAll(() => void ({ service, alice, bob } = stack));

  /** A stream a test opens, closed when the stack stops even when the test fails (an open one would hold the service's stop). */
  const listenOn = async (...args: Parameters<Listen['open']>) => stack.closeOnStop(await new Listen().open(...args));

  const run = async (client: Client, request: string, sessionId?: string) =>
    fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request, ...(sessionId ? { session_id: sessionId } : {}) } })));

  it('pushes notifications/tasks for each transition of the caller’s own Task, none for another user’s', async () => {
    // Alice's Task answers once the stream has pushed its current state: a timed delay could end it before the
    // stream opened, and the stream would then show only its end.
    const followed = gate();
    ollama.enqueue({ content: 'alice done', heldUntil: followed.opened }, { content: 'bob done', delayMs: 200 });
    const mine = await run(alice, 'alice work');
    const theirs = await run(bob, 'bob work');
    const listen = await listenOn(service.url, ALICE, { taskIds: [mine.task_id, theirs.task_id] });
    try {
      await listen.until((messages) => messages.some((message) => message.method === 'notifications/tasks'));
    } finally {
      followed.open();
    }
    await listen.until((messages) => messages.some((message) => message.method === 'notifications/tasks' && message.params?.status === 'completed'), 15_000);
    const [ack] = listen.messages;
    expect(ack).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [mine.task_id] }, _meta: { [SUBSCRIPTION_ID]: 'sub-1' } },
    });
    const updates = listen.of('notifications/tasks');
    expect(updates.every((update) => update.params!.taskId === mine.task_id && update.params!._meta[SUBSCRIPTION_ID] === 'sub-1')).toBe(true);
    expect(updates.map((update) => update.params!.status)).toEqual([...updates.slice(0, -1).map(() => 'working'), 'completed']);
    expect(new Set(updates.map((update) => update.params!.statusMessage)).size).toBe(updates.length);
    expect(updates.at(-1)!.params).toMatchObject({ result: { content: [{ type: 'text', text: expect.stringContaining('result: alice done') }], isError: false } });
    expect(updates.length).toBeGreaterThanOrEqual(2);
    // Bob's Task ran too (to its end, after Alice's), and nothing of it reached Alice's stream.
    await waitForTerminal((taskId) => statusText(bob, taskId), theirs.task_id);
    expect(JSON.stringify(listen.messages)).not.toContain(theirs.task_id);
    await listen.close();
  });

  it('refuses taskIds from a client that did not declare the Tasks extension with -32021, and mismatched routing headers with -32020', async () => {
    const listen = await new Listen().open(service.url, ALICE, { taskIds: ['00000000-0000-4000-8000-000000000000'] }, false);
    expect(listen.status).toBe(400);
    expect(listen.messages[0]).toMatchObject({ id: 'sub-1', error: { code: -32021 } });
    const mismatched = await new Listen().open(service.url, { ...ALICE, 'Mcp-Method': 'tools/list' }, { resourcesListChanged: true });
    expect(mismatched.status).toBe(400);
    expect(mismatched.messages[0]).toMatchObject({ error: { code: -32020 } });
  });

  it('tasks/get routes by Mcp-Name: the header must be the taskId (-32020 otherwise), as the extension requires', async () => {
    ollama.enqueue({ content: 'routed' });
    const { task_id: taskId } = await run(alice, 'route me');
    const get = (name: string) =>
      fetch(service.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tasks/get',
          'Mcp-Name': name,
          ...ALICE,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/get', params: { taskId, _meta: modernMeta(true) } }),
      });
    const wrong = await get('00000000-0000-4000-8000-000000000000');
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: { code: -32020 } });
    const right = await get(taskId);
    expect(right.status).toBe(200);
    expect(JSON.stringify(await right.text())).toContain(taskId);
  });

  it('pushes notifications/resources/updated for a subscribed session file a Task changed, and list_changed when the session gains one', async () => {
    ollama.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'one' } }] }, { content: 'wrote' });
    const first = await run(alice, 'write notes');
    expect(await waitForTerminal((taskId) => statusText(alice, taskId), first.task_id)).toMatchObject({ status: 'completed' });
    const uri = `agent-session://${first.session_id}/files/notes.txt`;
    const bobsView = await listenOn(service.url, BOB, { resourceSubscriptions: [uri], resourcesListChanged: true });
    const listen = await listenOn(service.url, ALICE, { resourceSubscriptions: [uri], resourcesListChanged: true });
    await listen.until((messages) => messages.length > 0);
    expect(listen.messages[0]).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { resourceSubscriptions: [uri], resourcesListChanged: true } },
    });
    ollama.enqueue(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'two' } }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'more.txt', content: 'new' } }] },
      { content: 'rewrote' },
    );
    await run(alice, 'rewrite notes', first.session_id);
    await listen.until((messages) => messages.some((message) => message.method === 'notifications/resources/list_changed'));
    expect(listen.of('notifications/resources/updated').map((message) => message.params!.uri)).toEqual([uri]);
    expect(listen.of('notifications/resources/updated')[0].params!._meta[SUBSCRIPTION_ID]).toBe('sub-1');
    // Bob named Alice's file: his subscription honours it not, and gets nothing.
    expect(bobsView.messages[0]).toMatchObject({ params: { notifications: { resourcesListChanged: true } } });
    expect(JSON.stringify(bobsView.messages)).not.toContain(first.session_id);
    expect(bobsView.of('notifications/resources/list_changed')).toEqual([]);
    await listen.close();
    await bobsView.close();
  });

  it('ends open streams when the service stops (last: it stops the service)', async () => {
    const listen = await listenOn(service.url, ALICE, { resourcesListChanged: true });
    await listen.until((messages) => messages.length > 0);
    const started = Date.now();
    await service.stop();
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
