import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { DataSource } from 'typeorm';
import { AuditEventEntity } from '../../src/audit/audit-event.entity.js';
import { AuditLogService } from '../../src/audit/audit-log.service.js';
import { AuditRepository } from '../../src/audit/audit.repository.js';
import { PlainSql } from '../../src/database/plain-sql.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { startActiveTaskSampler } from '../support/active-task-sampler.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { freshDatabase } from '../support/databases.js';
import { fieldsOf, modernClient, textOf } from '../support/mcp-clients.js';
import { prng } from '../support/prng.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../support/service-process.js';

const ROUNDS = Number(process.env.OAM_REPLICA_ROUNDS ?? 12);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe(`three replicas on PostgreSQL, one killed with -9 in each of ${ROUNDS} rounds (T5.2, T5.3)`, () => {
  const ollama = new ScriptedOllama();
  const replicas: ServiceProcess[] = [];
  let database: DatabaseTarget;

  beforeAll(async () => {
    await ollama.start();
    ollama.setFallback({ content: 'ok', delayMs: 150, promptEvalCount: 1, evalCount: 1 });
    database = (await freshDatabase('postgres')) as DatabaseTarget;
    for (let n = 0; n < 3; n++) replicas.push(await new ServiceProcess((await writeConfig(ollama.url, { database })).file).start());
  });

  afterAll(async () => {
    for (const replica of replicas) await replica.stop();
    await ollama.stop();
  });

  it('loses no Task, runs none twice, ends all, and never has two active', async () => {
    const random = prng(7);
    const sampler = startActiveTaskSampler(database);
    const accepted: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (let n = 0; n < 4; n++) {
        const replica = replicas[Math.floor(random() * 3)];
        let client: Client | null = null;
        try {
          client = await modernClient(replica.url);
          accepted.push(fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: `round ${round}.${n}` } }))).task_id);
        } catch {
          // a replica being restarted does not answer; the client would retry elsewhere
        } finally {
          await client?.close().catch(() => undefined);
        }
      }
      await sleep(Math.floor(random() * 600));
      const victim = replicas[Math.floor(random() * 3)];
      await victim.kill9();
      await victim.start(victim.port);
    }
    const deadline = Date.now() + 90_000;
    for (;;) {
      const [{ open }] = await probe<{ open: string }>(database, "SELECT COUNT(*) AS open FROM tasks WHERE status IN ('queued', 'planning', 'running')");
      if (Number(open) === 0 || Date.now() > deadline) break;
      await sleep(250);
    }
    const maxActive = await sampler.stop();

    const stored = await probe<{ id: string; status: string; result: string | null }>(database, 'SELECT id, status, result FROM tasks');
    const ids = new Set(stored.map((row) => row.id));
    expect(accepted.filter((id) => !ids.has(id))).toEqual([]);
    expect(stored.filter((row) => !['completed', 'failed', 'cancelled'].includes(row.status))).toEqual([]);
    const runningTwice = await probe<{ task_id: string; n: string }>(
      database,
      `SELECT task_id, COUNT(*) AS n FROM audit_events WHERE action = 'task.status' AND detail LIKE '%"status":"running"%' GROUP BY task_id HAVING COUNT(*) > 1`,
    );
    expect(runningTwice).toEqual([]);
    expect(maxActive).toBeLessThanOrEqual(1);
    // Three writers, killed mid-write at random: still one gapless, verifiable chain (T4.3).
    const source = new DataSource(dataSourceOptions(validateConfig({ database }).database, [AuditEventEntity]));
    await source.initialize();
    const chain = await new AuditLogService(new AuditRepository(new PlainSql(source))).verify();
    await source.destroy();
    expect(chain).toMatchObject({ ok: true, firstBadSeq: null });
    const verify = [{ n: String(chain.checked) }];
    process.stderr.write(
      `replicas: ${ROUNDS} kills, ${accepted.length} accepted, ${stored.filter((row) => row.status === 'completed').length} completed, ` +
        `${stored.filter((row) => row.status === 'failed').length} interrupted, max active ${maxActive}, ${verify[0].n} audit events\n`,
    );
  });
});
