import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { E2E_DATABASE, freshDatabase } from '../support/databases.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../support/service-process.js';

// Replicas share a PostgreSQL database; this suite runs in the PostgreSQL pass of `npm test`.
const describeOnPostgres = E2E_DATABASE === 'postgres' ? describe : describe.skip;

/** Issue 20, finding 6: fair scheduling across three replicas, two users, one active Task throughout. */
describeOnPostgres('fair scheduling on three replicas of one PostgreSQL database', () => {
  const ollama = new ScriptedOllama();
  const replicas: ServiceProcess[] = [];
  const mallory: Client[] = [];
  const bob: Client[] = [];
  let database: DatabaseTarget;

  beforeAll(async () => {
    await ollama.start();
    database = (await freshDatabase('postgres')) as DatabaseTarget;
    const workspace = { root: mkdtempSync(join(tmpdir(), 'oam-fair-replicas-')) };
    for (let n = 0; n < 3; n++) {
      const replica = new ServiceProcess((await writeConfig(ollama.url, { database, workspace, auth: PROXY_AUTH })).file);
      await replica.start();
      replicas.push(replica);
      mallory.push(await modernClient(replica.url, as('mallory@example.com')));
      bob.push(await modernClient(replica.url, as('bob@example.com')));
    }
  }, 120_000);

  afterAll(async () => {
    for (const client of [...mallory, ...bob]) await client.close();
    for (const replica of replicas) await replica.stop();
    await ollama.stop();
  });

  it("runs bob's Tasks between mallory's, whichever replica took them, never two at once", async () => {
    const sampler = new pg.Client({ connectionString: (database as { url: string }).url });
    await sampler.connect();
    let maxActive = 0;
    let sampling = true;
    const sampling$ = (async () => {
      while (sampling) {
        const { rows } = await sampler.query("SELECT COUNT(*)::int AS n FROM tasks WHERE status IN ('planning', 'running')");
        maxActive = Math.max(maxActive, rows[0].n);
        await new Promise((done) => setTimeout(done, 10));
      }
    })();
    // mallory's first Task holds the worker while the rest of the flood and bob's two Tasks arrive.
    ollama.enqueue({ content: 'first', delayMs: 600 });
    ollama.setFallback({ content: 'done', delayMs: 40, promptEvalCount: 1, evalCount: 1 });
    const submit = async (clients: Client[], n: number, request: string) => fieldsOf(textOf(await clients[n % 3].callTool({ name: 'agent_run', arguments: { request } }))).task_id;
    const ids: [Client[], string][] = [];
    for (let n = 0; n < 6; n++) ids.push([mallory, await submit(mallory, n, `mallory ${n}`)]);
    for (let n = 0; n < 2; n++) ids.push([bob, await submit(bob, n + 1, `bob ${n}`)]);
    for (const [index, [clients, id]] of ids.entries()) {
      const final = await waitForTerminal(async (taskId) => textOf(await clients[(index + 2) % 3].callTool({ name: 'agent_status', arguments: { task_id: taskId } })), id, 30_000);
      expect(final.status).toBe('completed');
    }
    sampling = false;
    await sampling$;
    await sampler.end();
    expect(maxActive).toBe(1);
    const rows = await probe<{ request: string }>(database, 'SELECT request FROM tasks ORDER BY started_at');
    expect(rows.map((row) => row.request)).toEqual(['mallory 0', 'bob 0', 'mallory 1', 'bob 1', 'mallory 2', 'mallory 3', 'mallory 4', 'mallory 5']);
  });
});
