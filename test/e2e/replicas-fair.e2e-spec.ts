import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { startActiveTaskSampler } from '../support/active-task-sampler.js';
import { probe } from '../support/database-probe.js';
import { E2E_DATABASE } from '../support/databases.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { as, PROXY_AUTH } from '../support/proxy-identity.js';
import { gate } from '../support/gate.js';

// Replicas share a PostgreSQL database; this suite runs in the PostgreSQL pass of `npm test`.
const describeOnPostgres = E2E_DATABASE === 'postgres' ? describe : describe.skip;

/** Issue 20, finding 6: fair scheduling across three replicas, two users, one active Task throughout. */
describeOnPostgres('fair scheduling on three replicas of one PostgreSQL database', () => {
  // The replicas share the stack's agent.yaml: one database, one workspace.
  const stack = useStack({ config: { auth: PROXY_AUTH } });
  const { ollama } = stack;
  const mallory: Client[] = [];
  const bob: Client[] = [];

  beforeAll(async () => {
    for (const replica of [stack.service, await stack.startAnotherService(), await stack.startAnotherService()]) {
      mallory.push(stack.closeOnStop(await modernClient(replica.url, as('mallory@example.com'))));
      bob.push(stack.closeOnStop(await modernClient(replica.url, as('bob@example.com'))));
    }
  }, 120_000);

  it("runs bob's Tasks between mallory's, whichever replica took them, never two at once", async () => {
    const sampler = startActiveTaskSampler(stack.database);
    // mallory's first Task holds the worker until the rest of the flood and bob's two Tasks have arrived (a timed
    // delay could end it first, and mallory's next Task would start before bob's were there).
    const allQueued = gate();
    ollama.enqueue({ content: 'first', heldUntil: allQueued.opened });
    ollama.setFallback({ content: 'done', delayMs: 40, promptEvalCount: 1, evalCount: 1 });
    const submit = async (clients: Client[], n: number, request: string) => fieldsOf(textOf(await clients[n % 3].callTool({ name: 'agent_run', arguments: { request } }))).task_id;
    const ids: [Client[], string][] = [];
    try {
      for (let n = 0; n < 6; n++) ids.push([mallory, await submit(mallory, n, `mallory ${n}`)]);
      for (let n = 0; n < 2; n++) ids.push([bob, await submit(bob, n + 1, `bob ${n}`)]);
    } finally {
      allQueued.open();
    }
    for (const [index, [clients, id]] of ids.entries()) {
      const final = await waitForTerminal(async (taskId) => textOf(await clients[(index + 2) % 3].callTool({ name: 'agent_status', arguments: { task_id: taskId } })), id, 30_000);
      expect(final.status).toBe('completed');
    }
    expect(await sampler.stop()).toBe(1);
    const rows = await probe<{ request: string }>(stack.database, 'SELECT request FROM tasks ORDER BY started_at');
    expect(rows.map((row) => row.request)).toEqual(['mallory 0', 'bob 0', 'mallory 1', 'bob 1', 'mallory 2', 'mallory 3', 'mallory 4', 'mallory 5']);
  });
});
