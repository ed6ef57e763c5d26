import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { startActiveTaskSampler } from '../support/active-task-sampler.js';
import { probe } from '../support/database-probe.js';
import { E2E_DATABASE } from '../support/databases.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, httpRawDispatch, modernClient, modernMeta, textOf, waitForTerminal } from '../support/mcp-clients.js';
import type { ServiceProcess } from '../support/service-process.js';

// Replicas share a PostgreSQL database; this suite runs in the PostgreSQL pass of `npm test`.
const describeOnPostgres = E2E_DATABASE === 'postgres' ? describe : describe.skip;

describeOnPostgres('three replicas on one PostgreSQL database (T5.2, T5.3)', () => {
  // All replicas share the stack's agent.yaml: one database and one workspace.root (a shared volume), as any
  // of them may run a session's next Task.
  const stack = useStack();
  const { ollama } = stack;
  const replicas: ServiceProcess[] = [];
  const clients: Client[] = [];
  const startSampler = () => startActiveTaskSampler(stack.database);

  beforeAll(async () => {
    // Three services start one after another (the first applies the migrations); on a busy machine that
    // takes longer than Jest's default hook time.
    replicas.push(stack.service, await stack.startAnotherService(), await stack.startAnotherService());
    for (const replica of replicas) clients.push(stack.closeOnStop(await modernClient(replica.url)));
  }, 120_000);

  it('runs Tasks submitted to any replica one at a time, in submission order, and any replica reports any Task', async () => {
    ollama.setFallback({ content: 'done', delayMs: 60, promptEvalCount: 1, evalCount: 1 });
    // This test's chats only: the highest concurrency is counted from here.
    ollama.maxConcurrentChats = 0;
    const sampler = startSampler();
    const ids: string[] = [];
    for (let n = 0; n < 12; n++) {
      const result = await clients[n % 3].callTool({ name: 'agent_run', arguments: { request: `job ${n}` } });
      ids.push(fieldsOf(textOf(result)).task_id);
    }
    for (const [n, id] of ids.entries()) {
      const final = await waitForTerminal(async (taskId) => textOf(await clients[(n + 1) % 3].callTool({ name: 'agent_status', arguments: { task_id: taskId } })), id, 30_000);
      expect(final.status).toBe('completed');
    }
    expect(ollama.maxConcurrentChats).toBe(1);
    const rows = await probe<{ request: string; lease_owner: string | null }>(stack.database, "SELECT request FROM tasks WHERE request LIKE 'job %' ORDER BY started_at");
    expect(rows.map((row) => row.request)).toEqual(ids.map((_, n) => `job ${n}`));
    expect(await sampler.stop()).toBe(1);
  });

  it('cancels, through replica B, a Task running on another replica', async () => {
    ollama.enqueue({ hang: true });
    const before = ollama.workChats.length;
    const taskId = fieldsOf(textOf(await clients[0].callTool({ name: 'agent_run', arguments: { request: 'runs somewhere' } }))).task_id;
    await ollama.waitForChats(before + 1);
    const [{ lease_owner: owner }] = await probe<{ lease_owner: string }>(stack.database, 'SELECT lease_owner FROM tasks WHERE id = ?', taskId);
    const other = replicas.findIndex((replica) => !owner.includes(`/${replica.pid}/`));
    const started = Date.now();
    const cancel = await httpRawDispatch(replicas[other].url)({ method: 'tasks/cancel', params: { taskId, _meta: modernMeta(true) } });
    expect(cancel.kind).toBe('result');
    const final = await waitForTerminal(async (id) => textOf(await clients[other].callTool({ name: 'agent_status', arguments: { task_id: id } })), taskId);
    expect(final.status).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it("keeps a session's files across Tasks whichever replica runs them, and any replica serves them", async () => {
    const run = async (n: number, request: string, sessionId?: string) => {
      const accepted = fieldsOf(textOf(await clients[n].callTool({ name: 'agent_run', arguments: { request, ...(sessionId ? { session_id: sessionId } : {}) } })));
      await waitForTerminal(async (id) => textOf(await clients[n].callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id, 30_000);
      return accepted.session_id;
    };
    const edit = (from: number) => ({ toolCalls: [{ name: 'edit_file', arguments: { path: 'count.txt', old_text: `${from}`, new_text: `${from + 1}` } }] });
    ollama.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'count.txt', content: '0' } }] }, { content: 'written' });
    const sessionId = await run(0, 'write 0');
    ollama.enqueue(edit(0), { content: 'edited' });
    await run(1, 'edit to 1', sessionId);
    ollama.enqueue(edit(1), { content: 'edited' });
    await run(2, 'edit to 2', sessionId);
    const read = await clients[1].readResource({ uri: `agent-session://${sessionId}/files/count.txt` });
    expect(read.contents[0]).toMatchObject({ text: '2' });
  });

  it('never has two active Tasks at once when all three replicas take requests at the same moment (sampled every 10 ms)', async () => {
    ollama.setFallback({ content: 'done', delayMs: 60, promptEvalCount: 1, evalCount: 1 });
    const sampler = startSampler();
    const accepted = await Promise.all(Array.from({ length: 6 }, (_, n) => clients[n % 3].callTool({ name: 'agent_run', arguments: { request: `burst ${n}` } })));
    for (const result of accepted) {
      const final = await waitForTerminal(
        async (taskId) => textOf(await clients[0].callTool({ name: 'agent_status', arguments: { task_id: taskId } })),
        fieldsOf(textOf(result)).task_id,
        30_000,
      );
      expect(final.status).toBe('completed');
    }
    // 1, not 0: the sampler saw the Tasks run, so "never 2" means something.
    expect(await sampler.stop()).toBe(1);
  });
});
