import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { probe } from '../support/database-probe.js';
import { fieldsOf, modernClient, textOf } from '../support/mcp-clients.js';
import { prng } from '../support/prng.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../support/service-process.js';

const ITERATIONS = Number(process.env.OAM_SOAK_ITERATIONS ?? 25);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe(`kill -9 soak (T5.1 with the T5.2 sampler), ${ITERATIONS} iterations`, () => {
  const ollama = new ScriptedOllama();
  let service: ServiceProcess;
  let config: Awaited<ReturnType<typeof writeConfig>>;

  beforeAll(async () => {
    await ollama.start();
    ollama.setFallback({ content: 'ok', delayMs: 150, promptEvalCount: 1, evalCount: 1 });
    config = await writeConfig(ollama.url);
    service = new ServiceProcess(config.file);
  });

  afterAll(async () => {
    await service.stop();
    await ollama.stop();
  });

  it('loses no Task, leaves none stuck, never has two active, and keeps the database intact', async () => {
    const random = prng(20261202);
    const submitted: string[] = [];
    let maxActive = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        try {
          const [{ n }] = await probe<{ n: number }>(config.database, "SELECT COUNT(*) AS n FROM tasks WHERE status IN ('planning', 'running')");
          maxActive = Math.max(maxActive, Number(n));
        } catch {
          // the database file may not exist yet
        }
        await sleep(10);
      }
    })();
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      await service.start(service.port || undefined);
      const client = await modernClient(service.url);
      const killAt = Date.now() + Math.floor(random() * 1200);
      for (let n = 0; n < 3; n++) {
        try {
          const result = await client.callTool({ name: 'agent_run', arguments: { request: `soak ${iteration}.${n}` } });
          submitted.push(fieldsOf(textOf(result)).task_id);
        } catch {
          break; // the kill can land while a submission is in flight: unanswered is not accepted
        }
      }
      await sleep(Math.max(0, killAt - Date.now()));
      await service.kill9();
      await client.close().catch(() => undefined);
    }
    await service.start(service.port);
    const deadline = Date.now() + 60_000;
    let open: { n: number }[];
    do {
      await sleep(200);
      open = await probe<{ n: number }>(config.database, "SELECT COUNT(*) AS n FROM tasks WHERE status IN ('queued', 'planning', 'running')");
    } while (Number(open[0].n) > 0 && Date.now() < deadline);
    sampling = false;
    await sampler;

    const stored = await probe<{ id: string; status: string; result: string | null }>(config.database, 'SELECT id, status, result FROM tasks');
    const byId = new Map(stored.map((row) => [row.id, row]));
    expect(submitted.filter((id) => !byId.has(id))).toEqual([]);
    expect(stored.filter((row) => !['completed', 'failed', 'cancelled'].includes(row.status))).toEqual([]);
    for (const row of stored.filter((task) => task.status === 'failed')) expect(row.result).toMatch(/^Interrupted/);
    expect(maxActive).toBeLessThanOrEqual(1);
    if (config.database.type === 'sqlite') {
      const db = new Database(config.database.path, { readonly: true });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
    }
    process.stderr.write(
      `soak: ${ITERATIONS} kills, ${submitted.length} accepted, ${stored.filter((row) => row.status === 'completed').length} completed, ` +
        `${stored.filter((row) => row.status === 'failed').length} interrupted, max active ${maxActive}\n`,
    );
  });
});
