import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { probe } from '../support/database-probe.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../support/service-process.js';

describe('kill -9 during a running Task', () => {
  const ollama = new ScriptedOllama();
  let service: ServiceProcess;
  let config: Awaited<ReturnType<typeof writeConfig>>;

  beforeAll(async () => {
    await ollama.start();
    config = await writeConfig(ollama.url);
    service = new ServiceProcess(config.file);
  });

  afterAll(async () => {
    await service.stop();
    await ollama.stop();
  });

  it('loses no Task: the running one fails as interrupted, the queued ones survive and run after restart', async () => {
    await service.start();
    let client: Client = await modernClient(service.url);
    ollama.enqueue({ hang: true });
    const submit = async (request: string) => fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request } }))).task_id;
    const running = await submit('will be interrupted');
    await ollama.waitForChats(1);
    const queued = [await submit('queued 1'), await submit('queued 2'), await submit('queued 3')];
    await client.close().catch(() => undefined);

    await service.kill9();
    expect(await probe(config.database, 'SELECT status FROM tasks WHERE id = ?', running)).toEqual([{ status: 'running' }]);

    ollama.setFallback({ content: 'after restart', promptEvalCount: 1, evalCount: 1 });
    await service.start(service.port);
    client = await modernClient(service.url);
    const status = async (taskId: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
    const interrupted = await waitForTerminal(status, running);
    expect(interrupted.status).toBe('failed');
    expect(interrupted.result).toMatch(/^Interrupted: the service stopped while this task was running/);
    for (const taskId of queued) expect(await waitForTerminal(status, taskId)).toMatchObject({ status: 'completed', result: 'after restart' });
    const order = await probe<{ request: string }>(config.database, "SELECT request FROM tasks WHERE request LIKE 'queued %' ORDER BY started_at");
    expect(order.map((row) => row.request)).toEqual(['queued 1', 'queued 2', 'queued 3']);
    const [recovery] = await probe<{ actor: string; detail: string }>(
      config.database,
      "SELECT actor, detail FROM audit_events WHERE task_id = ? AND action = 'task.status' ORDER BY seq DESC LIMIT 1",
      running,
    );
    expect(recovery.actor).toBe('system');
    expect(JSON.parse(recovery.detail)).toMatchObject({ status: 'failed' });
    await client.close();
  });
});
