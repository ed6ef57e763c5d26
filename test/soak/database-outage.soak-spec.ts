import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { freshDatabase } from '../support/databases.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../support/service-process.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('PostgreSQL outage during a running Task (T5.5)', () => {
  const ollama = new ScriptedOllama();
  const proxy = new TcpProxy({ host: '127.0.0.1', port: 5432 });
  let service: ServiceProcess;
  let direct: DatabaseTarget;

  beforeAll(async () => {
    await ollama.start();
    await proxy.start();
    direct = (await freshDatabase('postgres')) as DatabaseTarget;
    const viaProxy = { type: 'postgres', url: (direct as { url: string }).url.replace(':5432/', `:${proxy.port}/`) };
    service = await new ServiceProcess((await writeConfig(ollama.url, { database: viaProxy, queue: { lease_ms: 2000, poll_interval_ms: 100 } })).file).start();
  });

  afterAll(async () => {
    await service?.stop();
    await proxy.cut();
    await ollama.stop();
  });

  it('stops the runner that cannot renew its lease, stays up, reports not ready, then recovers the Task and the queue', async () => {
    const client = await modernClient(service.url);
    ollama.enqueue({ content: 'too late', delayMs: 8000 });
    const taskId = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'long model call' } }))).task_id;
    await ollama.waitForChats(1);
    const base = service.url.replace(/\/mcp$/, '');

    await proxy.cut();
    await sleep(500);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const readiness = await fetch(`${base}/readyz`);
    expect(readiness.status).toBe(503);
    // Probes say which dependency is down and nothing more (the reason goes to the log and /admin/readyz).
    expect(await readiness.json()).toMatchObject({ status: 'not_ready', checks: { database: 'unavailable' } });
    await sleep(3500);
    // The runner gave up its lease: the model call it was waiting on was aborted.
    expect(ollama.workChats[0].aborted).toBe(true);
    await proxy.restore();

    const status = async (id: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } }));
    const interrupted = await waitForTerminal(status, taskId, 20_000);
    expect(interrupted.status).toBe('failed');
    expect(interrupted.result).toMatch(/^Interrupted/);
    ollama.enqueue({ content: 'queue is back' });
    const next = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'after the outage' } }))).task_id;
    expect(await waitForTerminal(status, next, 20_000)).toMatchObject({ status: 'completed', result: 'queue is back' });
    const [{ n }] = await probe<{ n: string }>(direct, "SELECT COUNT(*) AS n FROM tasks WHERE status IN ('planning', 'running')");
    expect(Number(n)).toBe(0);
    await client.close();
  });
});
