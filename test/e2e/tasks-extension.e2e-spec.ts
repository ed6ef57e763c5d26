import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { tasksGetUntil, withTasks as withTasksOn } from '../support/agent-tasks.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, httpRawDispatch, legacyClient, modernMeta, tasksSession, textOf, type RawDispatch } from '../support/mcp-clients.js';
import type { ServiceProcess } from '../support/service-process.js';
import { gate } from '../support/gate.js';

describe('Tasks extension over HTTP (ext-tasks client and raw requests)', () => {
  const stack = useStack();
  const { ollama } = stack;
  let service: ServiceProcess;
  let client: Client;
  let raw: RawDispatch;
  let db: DatabaseTarget;

  const withTasks = (method: string, params: Record<string, unknown>) => withTasksOn(raw, method, params);
  const withoutTasks = (method: string, params: Record<string, unknown>) => raw({ method, params: { ...params, _meta: modernMeta(false) } });
  const waitForStatus = (taskId: string, wanted: string[]) => tasksGetUntil(raw, taskId, wanted);

  beforeAll(async () => {
    ({ service, database: db } = stack);
    client = await stack.mcpClient();
    raw = httpRawDispatch(service.url);
  });

  it('runs a full Tasks flow: CreateTaskResult with the agent task id, polling, final agent_status text', async () => {
    ollama.enqueue({ content: 'done by the model', promptEvalCount: 30, evalCount: 12, delayMs: 200 });
    const session = tasksSession(client, raw);
    const exec = await session.callTool('agent_run', { request: 'summarise the repository' });
    expect(exec.kind).toBe('task');
    const taskId = (exec as { handle: { taskId: string } }).handle.taskId;
    expect(await probe(db, 'SELECT id FROM tasks WHERE id = ?', taskId)).toHaveLength(1);
    const { outcome } = await (exec as { settle(): Promise<{ outcome: unknown }> }).settle();
    const result = resultFromTaskOutcome<{ content: unknown; isError?: boolean }>(outcome as never);
    const fields = fieldsOf(textOf(result));
    expect(fields).toMatchObject({ task_id: taskId, status: 'completed', completed_tasks: '1/1', result: 'done by the model' });
    expect(fields.token_usage).toBe('input=30 output=12 total=42');
    expect(result.isError).toBeFalsy();
    await session.close();
  });

  it('answers CreateTaskResult with integer ttlMs/pollIntervalMs, durably stored before the reply', async () => {
    const response = await withTasks('tools/call', { name: 'agent_run', arguments: { request: 'durable?' } });
    expect(response.kind).toBe('result');
    const created = (response as { result: Record<string, unknown> }).result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(Number.isInteger(created.ttlMs)).toBe(true);
    expect(Number.isInteger(created.pollIntervalMs)).toBe(true);
    expect(created).not.toHaveProperty('ttl');
    expect(created._meta).not.toHaveProperty('io.modelcontextprotocol/related-task');
    const got = await withTasks('tasks/get', { taskId: created.taskId });
    expect(got).toMatchObject({ kind: 'result', result: { resultType: 'complete', taskId: created.taskId } });
    await waitForStatus(created.taskId as string, ['completed']);
  });

  it('maps a failed agent Task to completed with isError and the agent_status text', async () => {
    ollama.enqueue({ status: 500, error: 'boom' }, { status: 500, error: 'boom' }, { status: 500, error: 'boom' });
    const created = await withTasks('tools/call', { name: 'agent_run', arguments: { request: 'will fail' } });
    const taskId = (created as { result: { taskId: string } }).result.taskId;
    const final = await waitForStatus(taskId, ['completed', 'failed', 'cancelled']);
    expect(final.status).toBe('completed');
    expect(final.result.isError).toBe(true);
    expect(final.result.resultType).toBe('complete');
    expect(fieldsOf(final.result.content[0].text)).toMatchObject({ status: 'failed', message: 'タスクが失敗しました。' });
  });

  it('cancels a running Task: the Ollama request is aborted and the Task ends cancelled', async () => {
    ollama.enqueue({ hang: true });
    const chatsBefore = ollama.workChats.length;
    const cancelClient = await stack.mcpClient();
    const session = tasksSession(cancelClient, raw);
    const exec = (await session.callTool('agent_run', { request: 'never answers' })) as { handle: { taskId: string }; cancel(): Promise<unknown> };
    await ollama.waitForChats(chatsBefore + 1);
    const running = await waitForStatus(exec.handle.taskId, ['working']);
    expect(running.statusMessage).toMatch(/running 0\/1: ollama chat/);
    const startedAt = Date.now();
    await exec.cancel();
    const final = await waitForStatus(exec.handle.taskId, ['cancelled']);
    expect(Date.now() - startedAt).toBeLessThan(2000);
    expect(final.status).toBe('cancelled');
    await ollama.until(() => ollama.workChats[chatsBefore].aborted && ollama.activeChats === 0);
    await session.close();
  });

  it('cancels a queued Task at once; cancel on a terminal Task is an idempotent ack', async () => {
    // The first Task holds the worker until the second is cancelled (a timed delay could end first and let it run).
    const cancelled = gate();
    ollama.enqueue({ content: 'slow', heldUntil: cancelled.opened });
    const first = await withTasks('tools/call', { name: 'agent_run', arguments: { request: 'occupies the worker' } });
    const queued = await withTasks('tools/call', { name: 'agent_run', arguments: { request: 'waits in the queue' } });
    const queuedId = (queued as { result: { taskId: string } }).result.taskId;
    try {
      expect(await withTasks('tasks/cancel', { taskId: queuedId })).toMatchObject({ kind: 'result', result: { resultType: 'complete' } });
      expect(await withTasks('tasks/get', { taskId: queuedId })).toMatchObject({ kind: 'result', result: { status: 'cancelled' } });
      expect(await probe(db, 'SELECT status FROM tasks WHERE id = ?', queuedId)).toEqual([{ status: 'cancelled' }]);
      expect(await withTasks('tasks/cancel', { taskId: queuedId })).toMatchObject({ kind: 'result' });
    } finally {
      cancelled.open();
    }
    await waitForStatus((first as { result: { taskId: string } }).result.taskId, ['completed']);
    expect(ollama.workChats.some((chat) => chat.body.messages.at(-1)!.content === 'waits in the queue')).toBe(false);
  });

  it('acknowledges tasks/update for a known Task', async () => {
    const created = await withTasks('tools/call', { name: 'agent_run', arguments: { request: 'update me' } });
    const taskId = (created as { result: { taskId: string } }).result.taskId;
    expect(await withTasks('tasks/update', { taskId, inputResponses: {} })).toMatchObject({ kind: 'result', result: { resultType: 'complete' } });
    await waitForStatus(taskId, ['completed']);
  });

  it.each(['tasks/get', 'tasks/cancel', 'tasks/update'])('%s: unknown id is -32602, no capability is -32021', async (method) => {
    const unknown = await withTasks(method, { taskId: '00000000-0000-4000-8000-000000000000', inputResponses: {} });
    expect(unknown).toMatchObject({ kind: 'error', error: { code: -32602 } });
    const garbage = await withTasks(method, { taskId: 'not-a-task' });
    expect(garbage).toMatchObject({ kind: 'error', error: { code: -32602 } });
    const undeclared = await withoutTasks(method, { taskId: '00000000-0000-4000-8000-000000000000' });
    expect(undeclared).toMatchObject({
      kind: 'error',
      error: { code: -32021, data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } } },
    });
  });

  it('never returns a task to a request without the extension, nor to a legacy client, even with a legacy task param', async () => {
    const plain = await withoutTasks('tools/call', { name: 'agent_run', arguments: { request: 'plain' } });
    expect(plain).toMatchObject({ kind: 'result', result: { resultType: 'complete' } });
    expect(textOf((plain as { result: { content: unknown } }).result)).toMatch(/^task_id: .*\nstatus: queued/s);
    const legacy = await legacyClient(service.url);
    const result = await legacy.request(
      { method: 'tools/call', params: { name: 'agent_run', arguments: { request: 'legacy' }, task: { ttl: 1000 } } },
      (await import('@modelcontextprotocol/sdk/types.js')).CallToolResultSchema,
    );
    expect(textOf(result)).toMatch(/status: queued/);
    await legacy.close();
  });

  it('keeps tasks/result and tasks/list unknown (-32601)', async () => {
    for (const method of ['tasks/result', 'tasks/list']) {
      const response = await withTasks(method, {});
      expect(response).toMatchObject({ kind: 'error', error: { code: -32601 } });
    }
  });

  it('audits every tasks/* request with its outcome', async () => {
    const events = await probe<{ action: string; outcome: string }>(db, "SELECT action, outcome FROM audit_events WHERE action LIKE 'tasks/%'");
    expect(events.some((event) => event.action === 'tasks/get' && event.outcome === 'ok')).toBe(true);
    expect(events.some((event) => event.action === 'tasks/cancel' && event.outcome === 'ok')).toBe(true);
    expect(events.some((event) => event.action === 'tasks/update' && event.outcome === 'rejected')).toBe(true);
  });
});
