import { describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { gate } from '../support/gate.js';

describe('process lifecycle: kill -9', () => {
  const stack = useStack();
  const { ollama } = stack;

  it('loses no Task: the running one fails as interrupted, the queued ones survive and run after restart', async () => {
    const { service, database } = stack;
    let client: Client = await modernClient(service.url);
    ollama.enqueue({ hang: true });
    const submit = async (request: string) => fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request } }))).task_id;
    const running = await submit('will be interrupted');
    await ollama.waitForChats(1);
    const queued = [await submit('queued 1'), await submit('queued 2'), await submit('queued 3')];
    await client.close().catch(() => undefined);

    await service.kill9();
    expect(await probe(database, 'SELECT status FROM tasks WHERE id = ?', running)).toEqual([{ status: 'running' }]);

    ollama.setFallback({ content: 'after restart', promptEvalCount: 1, evalCount: 1 });
    await service.start(service.port);
    client = await modernClient(service.url);
    const status = async (taskId: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
    const interrupted = await waitForTerminal(status, running);
    expect(interrupted.status).toBe('failed');
    expect(interrupted.result).toMatch(/^Interrupted: the service stopped while this task was running; it was not resumed/);
    for (const taskId of queued) expect(await waitForTerminal(status, taskId)).toMatchObject({ status: 'completed', result: 'after restart' });
    const order = await probe<{ request: string }>(database, "SELECT request FROM tasks WHERE request LIKE 'queued %' ORDER BY started_at");
    expect(order.map((row) => row.request)).toEqual(['queued 1', 'queued 2', 'queued 3']);
    const [recovery] = await probe<{ actor: string; detail: string }>(
      database,
      "SELECT actor, detail FROM audit_events WHERE task_id = ? AND action = 'task.status' ORDER BY seq DESC LIMIT 1",
      running,
    );
    expect(recovery.actor).toBe('system');
    expect(JSON.parse(recovery.detail)).toMatchObject({ status: 'failed' });
    await client.close();
  });
});

describe('process lifecycle: SIGTERM with a grace of 3 s', () => {
  const stack = useStack({ config: { queue: { shutdown_grace_ms: 3000 } } });
  const { ollama } = stack;

  it('SIGTERM (T5.9): refuses new work with a clear error, lets the running Task finish within the grace, keeps queued Tasks', async () => {
    const graceful = stack.service;
    const client = await modernClient(graceful.url);
    const submit = async (request: string) => client.callTool({ name: 'agent_run', arguments: { request } });
    const before = ollama.workChats.length;
    // The running Task answers once the test has seen the shutting-down service refuse work and report the queued
    // Task: a timed delay could end first, and the process with it, before those requests were made.
    const checked = gate();
    ollama.enqueue({ content: 'finished in time', heldUntil: checked.opened });
    const running = fieldsOf(textOf(await submit('almost done'))).task_id;
    const queued = fieldsOf(textOf(await submit('still queued'))).task_id;
    await ollama.waitForChats(before + 1);
    const started = Date.now();
    const exited = graceful.signal('SIGTERM');
    try {
      // main.ts logs this line and then, in the same turn, stops accepting work.
      await graceful.waitForOutput(/SIGTERM: shutting down/);
      const refused = await submit('too late');
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/shutting down/);
      const status = fieldsOf(textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: queued } })));
      expect(status.status).toBe('queued');
    } finally {
      checked.open();
    }
    expect(await exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(3000 + 5000);
    const database = (
      await probe<{ id: string; status: string; result: string | null }>(graceful.database, 'SELECT id, status, result FROM tasks WHERE id IN (?, ?)', running, queued)
    ).sort((a, b) => (a.id === running ? -1 : b.id === running ? 1 : 0));
    expect(database.map((row) => [row.status, row.result])).toEqual([
      ['completed', 'finished in time'],
      ['queued', null],
    ]);
    await client.close().catch(() => undefined);
  });
});

describe('process lifecycle: SIGTERM with a grace of 500 ms', () => {
  const stack = useStack({ config: { queue: { shutdown_grace_ms: 500 } } });
  const { ollama } = stack;

  it('SIGTERM: a Task still running after the grace ends interrupted, and the process exits', async () => {
    const graceful = stack.service;
    const client = await modernClient(graceful.url);
    const before = ollama.workChats.length;
    ollama.enqueue({ hang: true });
    const taskId = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'endless' } }))).task_id;
    await ollama.waitForChats(before + 1);
    const started = Date.now();
    expect(await graceful.signal('SIGTERM')).toBe(0);
    expect(Date.now() - started).toBeLessThan(500 + 5000);
    const [row] = await probe<{ status: string; result: string }>(graceful.database, 'SELECT status, result FROM tasks WHERE id = ?', taskId);
    expect(row).toEqual({ status: 'failed', result: 'Interrupted: the service shut down before this task finished.' });
    await client.close().catch(() => undefined);
  });
});
