import { beforeAll, describe, expect, it } from '@jest/globals';
import { count, probe } from '../support/database-probe.js';
import type { DatabaseTarget } from '../support/database-probe.js';
import { MODERN, modernMeta, parseRpc } from '../support/mcp-clients.js';
import { useStack } from '../support/e2e-stack.js';
import type { ServiceProcess } from '../support/service-process.js';

describe('Streamable HTTP edge: raw requests, malformed input, limits', () => {
  const stack = useStack({
    config: {
      server: { allowed_origins: ['https://ide.example.com'] },
      mcp: { images: { max_count: 4, max_bytes_per_image: 1024 * 1024, max_total_bytes: 1024 * 1024 } },
    },
  });
  let service: ServiceProcess;
  let db: DatabaseTarget;

  const headersFor = (method: string, name?: string): Record<string, string> => ({
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': method,
    ...(name ? { 'Mcp-Name': name } : {}),
  });
  const post = (body: unknown, headers: Record<string, string>) => fetch(service.url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const call = (params: Record<string, unknown>, id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params });

  beforeAll(() => {
    ({ service, database: db } = stack);
  });

  it('answers GET and DELETE with 405 and never mints or echoes Mcp-Session-Id', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(service.url, { method, headers: { 'Mcp-Session-Id': 'abc' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('mcp-session-id')).toBeNull();
    }
    const res = await post(call({ name: 'agent_status', arguments: { task_id: '00000000-0000-0000-0000-000000000000' }, _meta: modernMeta(false) }), {
      ...headersFor('tools/call', 'agent_status'),
      'Mcp-Session-Id': 'client-made-up',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
  });

  it('refuses a foreign Origin and a non-local Host with 403; allows configured and loopback origins', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: modernMeta(false) } };
    const headers = headersFor('server/discover');
    expect((await post(body, { ...headers, Origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(body, { ...headers, Origin: 'null' })).status).toBe(403);
    expect((await post(body, { ...headers, Origin: 'https://ide.example.com' })).status).toBe(200);
    expect((await post(body, { ...headers, Origin: `http://localhost:${service.port}` })).status).toBe(200);
    const rebinding = await new Promise<number>((resolve, reject) => {
      // fetch does not let a test forge Host, so use a raw request.
      import('node:http').then(({ request }) => {
        const req = request({ host: '127.0.0.1', port: service.port, path: '/mcp', method: 'POST', headers: { ...headers, Host: 'attacker.example' } }, (res) =>
          resolve(res.statusCode ?? 0),
        );
        req.on('error', reject);
        req.end(JSON.stringify(body));
      }, reject);
    });
    expect(rebinding).toBe(403);
    const rejected = await probe<{ action: string }>(db, "SELECT action FROM audit_events WHERE action = 'http.request_rejected'");
    expect(rejected).toHaveLength(3);
  });

  it('rejects header/body mismatches with 400 and -32020', async () => {
    const params = { name: 'agent_status', arguments: { task_id: '00000000-0000-0000-0000-000000000000' }, _meta: modernMeta(false) };
    for (const headers of [headersFor('tools/list', 'agent_status'), headersFor('tools/call', 'agent_run'), headersFor('tools/call')]) {
      const res = await post(call(params), headers);
      expect(res.status).toBe(400);
      expect(parseRpc(await res.text(), res.headers.get('content-type'))).toMatchObject({ kind: 'error', error: { code: -32020 } });
    }
  });

  it('rejects an unsupported protocol version with 400 and -32022 naming the supported ones', async () => {
    const meta = { ...modernMeta(false), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
    const res = await post(
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } },
      { ...headersFor('server/discover'), 'MCP-Protocol-Version': '2099-01-01' },
    );
    expect(res.status).toBe(400);
    const response = parseRpc(await res.text(), res.headers.get('content-type'));
    expect(response).toMatchObject({ kind: 'error', error: { code: -32022 } });
    expect(JSON.stringify(response)).toContain('2026-07-28');
  });

  it('rejects a request without _meta or clientCapabilities with 400 and -32602', async () => {
    for (const params of [{}, { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } }]) {
      const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params }, headersFor('tools/list'));
      expect(res.status).toBe(400);
      expect(parseRpc(await res.text(), res.headers.get('content-type'))).toMatchObject({ kind: 'error', error: { code: -32602 } });
    }
  });

  it('answers invalid JSON and non-JSON-RPC bodies with JSON-RPC errors, never a 5xx', async () => {
    for (const body of ['{not json', '[]', '"text"', JSON.stringify({ jsonrpc: '1.0', id: 1, method: 'x' })]) {
      const res = await post(body, headersFor('tools/call', 'agent_run'));
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(JSON.parse(await res.text())).toHaveProperty('error.code');
    }
  });

  it('answers an unknown tool with -32602 and an unknown method with -32601', async () => {
    const res = await post(call({ name: 'rm_rf', arguments: {}, _meta: modernMeta(false) }), headersFor('tools/call', 'rm_rf'));
    expect(parseRpc(await res.text(), res.headers.get('content-type'))).toMatchObject({ kind: 'error', error: { code: -32602 } });
    const unknown = await post({ jsonrpc: '2.0', id: 2, method: 'ping', params: { _meta: modernMeta(false) } }, headersFor('ping'));
    expect(unknown.status).toBe(404);
    expect(parseRpc(await unknown.text(), unknown.headers.get('content-type'))).toMatchObject({ kind: 'error', error: { code: -32601 } });
  });

  it('acknowledges a notification with 202 and no body', async () => {
    const res = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, _meta: modernMeta(false) } }, headersFor('notifications/cancelled'));
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });

  it('sizes the body limit for the image limits: a full image payload passes, a larger body gets 413 and stores nothing', async () => {
    const image = Buffer.alloc(1024 * 1024, 1).toString('base64');
    const ok = await post(
      call({ name: 'agent_run', arguments: { request: 'big', images: [{ mime_type: 'image/png', data_base64: image }] }, _meta: modernMeta(false) }),
      headersFor('tools/call', 'agent_run'),
    );
    expect(ok.status).toBe(200);
    const tasksBefore = await count(db, 'tasks');
    const tooBig = await post(call({ name: 'agent_run', arguments: { request: 'x'.repeat(4 * 1024 * 1024) }, _meta: modernMeta(false) }), headersFor('tools/call', 'agent_run'));
    expect(tooBig.status).toBe(413);
    expect(await count(db, 'tasks')).toBe(tasksBefore);
  });
});
