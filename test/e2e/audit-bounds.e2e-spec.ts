import { beforeAll, describe, expect, it } from '@jest/globals';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { modernMeta, parseRpc, postMcp } from '../support/mcp-clients.js';
import { useStack } from '../support/e2e-stack.js';
import type { ServiceProcess } from '../support/service-process.js';

/** Bytes stored for the latest audit event of `action`: its detail and short columns. */
const STORED = 'SELECT length(detail) + length(actor) + coalesce(length(client), 0) AS n, outcome, detail FROM audit_events WHERE action = ? ORDER BY seq DESC LIMIT 1';

describe('what one call can store in the audit log is bounded (issue 9, finding 3)', () => {
  const stack = useStack({ config: { ollama: { model: 'test-model', num_ctx: 1024 } } });
  let service: ServiceProcess;
  let db: DatabaseTarget;

  /** One JSON-RPC request by hand: the SDK clients would not send these arguments. */
  const post = async (method: string, params: Record<string, unknown>) => {
    const res = await postMcp(service.url, method, JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }), method === 'tools/call' ? String(params.name) : undefined);
    return { status: res.status, rpc: parseRpc(await res.text(), res.headers.get('content-type')) };
  };
  const stored = async (action: string) => {
    const [row] = await probe<{ n: number; outcome: string; detail: string }>(db, STORED, action);
    return { ...row, n: Number(row.n) };
  };

  beforeAll(() => {
    ({ service, database: db } = stack);
  });

  it('a rejected agent_run with a 25 MB unknown argument writes a small audit row', async () => {
    const { rpc } = await post('tools/call', { name: 'agent_run', arguments: { request: 'x', ['k'.repeat(25_000_000)]: 'v' }, _meta: modernMeta(false) });
    expect(rpc).toMatchObject({ kind: 'result', result: { isError: true } });
    const row = await stored('tools/call agent_run');
    expect(row.outcome).toBe('rejected');
    expect(row.n).toBeLessThan(64 * 1024);
    expect(row.detail).toContain('…[cut: 25000000 chars]');
  });

  it('a tasks/get with a huge array as taskId writes a small audit row', async () => {
    const { rpc } = await post('tasks/get', { taskId: Array.from({ length: 2_000_000 }, () => 'abcdefgh'), _meta: modernMeta(true) });
    expect(rpc).toMatchObject({ kind: 'error', error: { code: -32602 } });
    const row = await stored('tasks/get');
    expect(row.n).toBeLessThan(64 * 1024);
    expect(row.detail).toContain('of 2000000 entries]');
  });

  it('a clientInfo name of 1 MB is stored cut (it would not fit the column on PostgreSQL)', async () => {
    const meta = { ...modernMeta(false), 'io.modelcontextprotocol/clientInfo': { name: 'c'.repeat(1_000_000), version: '1' } };
    const { rpc } = await post('tools/call', { name: 'agent_status', arguments: { task_id: '00000000-0000-4000-8000-000000000000' }, _meta: meta });
    expect(rpc.kind).toBe('result');
    const [row] = await probe<{ client: string }>(db, "SELECT client FROM audit_events WHERE action = 'tools/call agent_status' ORDER BY seq DESC LIMIT 1");
    expect(row.client.length).toBeLessThanOrEqual(200);
  });

  it('refuses a request longer than the model could ever take (ollama.num_ctx) as a Tool error, queueing nothing', async () => {
    const { rpc } = await post('tools/call', { name: 'agent_run', arguments: { request: 'y'.repeat(1024 * 4 + 1) }, _meta: modernMeta(false) });
    expect(rpc).toMatchObject({ kind: 'result', result: { isError: true } });
    expect((rpc as { result: { content: { text: string }[] } }).result.content[0].text).toMatch(
      /^Invalid arguments: request: 4097 characters exceeds the limit of 4096 characters/,
    );
    expect(await probe(db, 'SELECT id FROM tasks')).toEqual([]);
  });
});
