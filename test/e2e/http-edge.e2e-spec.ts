import { beforeAll, describe, expect, it } from '@jest/globals';
import { count, probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { MODERN, modernClient, modernMeta, parseRpc, postMcp } from '../support/mcp-clients.js';
import { pollUntil } from '../support/poll.js';
import { firstReply, head, openUpload, rawExchange } from '../support/raw-http.js';
import type { ServiceProcess } from '../support/service-process.js';

const TOKEN = 'edge-admin-token-0123456789';
/** Every kind of route the service serves, and one it does not. */
const ROUTES = ['/mcp', '/admin', '/admin/audit', '/admin/tasks', '/admin/metrics', '/admin/openapi.json', '/healthz', '/readyz', '/no/such/path'];
const MCP_HEADERS = ['Content-Type: application/json', 'Accept: application/json, text/event-stream', `MCP-Protocol-Version: ${MODERN}`, 'Mcp-Method: tools/list'];
const rejections = async (db: DatabaseTarget) => probe<{ detail: string }>(db, "SELECT detail FROM audit_events WHERE action = 'http.request_rejected' ORDER BY seq");

describe('HTTP edge: one Host/Origin guard for every route, methods, malformed requests, early refusal', () => {
  const stack = useStack({ config: { auth: { admin_token: TOKEN }, server: { allowed_origins: ['https://ide.example.com'] } } });
  let service: ServiceProcess;
  let db: DatabaseTarget;

  beforeAll(() => {
    ({ service, database: db } = stack);
  });

  const get = (path: string, lines: string[]) => rawExchange(service.port, head(`GET ${path} HTTP/1.1`, [...lines, `Authorization: Bearer ${TOKEN}`, 'Connection: close']));

  it('refuses a foreign Host (DNS rebinding) and a foreign Origin with 403 on every route, and audits each refusal', async () => {
    const before = (await rejections(db)).length;
    for (const path of ROUTES) {
      const rebound = await get(path, ['Host: attacker.example']);
      expect([path, rebound.status, rebound.headers.connection]).toEqual([path, 403, 'close']);
      const crossSite = await get(path, [`Host: 127.0.0.1:${service.port}`, 'Origin: https://evil.example']);
      expect([path, crossSite.status]).toEqual([path, 403]);
      expect(crossSite.body).toContain('evil.example');
    }
    // Loopback and configured origins still pass, on admin routes as on /mcp.
    expect((await get('/admin/tasks', [`Host: localhost:${service.port}`, `Origin: http://localhost:${service.port}`])).status).toBe(200);
    expect((await get('/admin/tasks', [`Host: [::1]:${service.port}`, 'Origin: https://ide.example.com'])).status).toBe(200);
    expect((await get('/admin/tasks', [`Host: 127.0.0.1:${service.port}`, 'Origin: http://ide.example.com'])).status).toBe(403);
    const audited = (await rejections(db)).slice(before).map((row) => JSON.parse(row.detail) as { path: string });
    expect(audited).toHaveLength(ROUTES.length * 2 + 1);
    expect(new Set(audited.map((detail) => detail.path))).toEqual(new Set([...ROUTES, '/admin/tasks']));
  });

  it('refuses a cross-site POST to an admin route before it acts, even with a valid admin token', async () => {
    const cancel = (lines: string[]) =>
      rawExchange(
        service.port,
        head('POST /admin/tasks/00000000-0000-0000-0000-000000000000/cancel HTTP/1.1', [
          `Host: 127.0.0.1:${service.port}`,
          `Authorization: Bearer ${TOKEN}`,
          'Content-Length: 0',
          'Connection: close',
          ...lines,
        ]),
      );
    for (const lines of [['Sec-Fetch-Site: cross-site'], ['Sec-Fetch-Site: same-site'], [`Origin: http://localhost:${service.port + 1}`], ['Origin: https://ide.example.com']]) {
      const refused = await cancel(lines);
      expect([lines, refused.status]).toEqual([lines, 403]);
      expect(refused.body).toContain('cross-site');
    }
    // Same-origin page requests and non-browser clients reach the route (no such Task: 404).
    for (const lines of [[], ['Sec-Fetch-Site: same-origin'], [`Origin: http://127.0.0.1:${service.port}`]]) {
      expect([lines, (await cancel(lines)).status]).toEqual([lines, 404]);
    }
  });

  it('refuses malformed and doubled Host headers with 400 naming the Host, on every route', async () => {
    const forms = [
      ['Host: evil.com@127.0.0.1'],
      [`Host: evil.com@127.0.0.1:${service.port}`],
      [`Host: 127.0.0.1:${service.port}`, 'Host: attacker.example'],
      ['Host: 127.0.0.1:99999'],
      ['Host: 127.0.0.1:port'],
      ['Host: '],
      ['Host: 127.0.0.1/admin'],
      ['Host: [::1'],
    ];
    for (const path of ROUTES) {
      for (const lines of forms) {
        const reply = await get(path, lines);
        expect([path, lines, reply.status]).toEqual([path, lines, 400]);
        expect(reply.body).toMatch(/Host/);
      }
    }
    const absolute = await rawExchange(service.port, head('GET http://attacker.example/admin HTTP/1.1', [`Host: 127.0.0.1:${service.port}`, 'Connection: close']));
    expect(absolute.status).toBe(400);
  });

  it('answers every method on every route without a 5xx, and logs no stack trace', async () => {
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'LOCK', 'PURGE', 'SEARCH', 'QUERY'];
    for (const path of ROUTES) {
      for (const method of methods) {
        const reply = await rawExchange(
          service.port,
          head(`${method} ${path} HTTP/1.1`, [`Host: 127.0.0.1:${service.port}`, ...MCP_HEADERS, 'Content-Length: 0', 'Connection: close']),
        );
        expect([method, path, reply.status >= 200 && reply.status < 500]).toEqual([method, path, true]);
        if (!['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS'].includes(method)) expect([method, path, reply.status]).toEqual([method, path, 405]);
      }
    }
    expect(service.stderr).not.toMatch(/ERROR|\n\s+at /);
  });

  /** JSON text nested `depth` deep, written out (JSON.stringify itself overflows Jest's stack at 5 000). */
  const nestedText = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  const requestRejections = async () =>
    (await probe<{ detail: string }>(db, "SELECT detail FROM audit_events WHERE action = 'mcp.request_rejected' ORDER BY seq")).map(
      (row) => JSON.parse(row.detail) as { reason: string; method: string | null; tool: string | null },
    );

  it('refuses nested arguments with a JSON-RPC error, audited, through the SDK client', async () => {
    const client = await modernClient(service.url);
    try {
      const before = (await requestRejections()).length;
      const tasks = await count(db, 'tasks');
      await expect(client.callTool({ name: 'agent_run', arguments: { request: 'deep', extra: JSON.parse(nestedText(1_000)) as unknown } })).rejects.toThrow(
        /nested deeper than 64/,
      );
      // Legit nesting right at the envelope's usual depth still works.
      const ok = await client.callTool({ name: 'agent_status', arguments: { task_id: '00000000-0000-0000-0000-000000000000' } });
      expect(ok.isError).toBeFalsy();
      expect(await count(db, 'tasks')).toBe(tasks);
      expect((await requestRejections()).slice(before)).toEqual([
        expect.objectContaining({ method: 'tools/call', tool: 'agent_run', reason: expect.stringContaining('nested deeper') }),
      ]);
    } finally {
      await client.close();
    }
  });

  const post = (body: string | Buffer, method: string, name?: string) => postMcp(service.url, method, body, name);

  it('refuses tools/call arguments nested 5 000 deep (a stack overflow before) with a JSON-RPC error, audited', async () => {
    const before = (await requestRejections()).length;
    const params = `{"name":"agent_run","arguments":{"request":"deep","extra":${nestedText(5_000)}},"_meta":${JSON.stringify(modernMeta(false))}}`;
    const res = await post(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":${params}}`, 'tools/call', 'agent_run');
    expect(res.status).toBe(400);
    expect(parseRpc(await res.text(), res.headers.get('content-type'))).toMatchObject({
      kind: 'error',
      error: { code: -32600, message: expect.stringContaining('nested deeper than 64') },
    });
    expect((await requestRejections()).slice(before)).toEqual([expect.objectContaining({ method: 'tools/call', tool: 'agent_run' })]);
    expect(service.stderr).not.toMatch(/Maximum call stack/);
  });

  it('refuses tasks/get and tasks/cancel with a deeply nested taskId as Invalid Request, not -32603, audited', async () => {
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const before = (await requestRejections()).length;
      const res = await post(`{"jsonrpc":"2.0","id":7,"method":"${method}","params":{"taskId":${nestedText(5_000)},"_meta":${JSON.stringify(modernMeta(true))}}}`, method);
      expect(res.status).toBe(400);
      expect(parseRpc(await res.text(), res.headers.get('content-type'))).toMatchObject({ kind: 'error', error: { code: -32600 } });
      expect((await requestRejections()).slice(before)).toEqual([expect.objectContaining({ method })]);
    }
  });

  it('refuses a body that is not valid UTF-8 with -32700 and stores nothing; valid UTF-8 still passes', async () => {
    const tasks = await count(db, 'tasks');
    const envelope = (request: string) =>
      JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'agent_run', arguments: { request }, _meta: modernMeta(false) } });
    const [before, after] = envelope('MARK').split('MARK');
    for (const bad of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe3, 0x81]]) {
      const res = await post(Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)]), 'tools/call', 'agent_run');
      expect([bad, res.status]).toEqual([bad, 400]);
      expect(parseRpc(await res.text(), res.headers.get('content-type'))).toMatchObject({ kind: 'error', error: { code: -32700, message: expect.stringContaining('UTF-8') } });
    }
    expect(await count(db, 'tasks')).toBe(tasks);
    const good = await post(Buffer.from(envelope('テストを直して')), 'tools/call', 'agent_run');
    expect(good.status).toBe(200);
    expect(await count(db, 'tasks')).toBe(tasks + 1);
  });
});

describe('HTTP edge: the caller is known before a byte of the body is read', () => {
  // No trusted proxy: every loopback peer is unidentified.
  const stack = useStack({ config: { auth: { mode: 'proxy_headers', trusted_proxies: ['10.9.9.9/32'] } } });
  let service: ServiceProcess;

  beforeAll(() => {
    ({ service } = stack);
  });

  /** The reply to an upload that has sent its head and none of its announced body; null if none came. */
  const replyToHeadOnly = async (lines: string[]) => {
    const socket = await openUpload(service.port, head('POST /mcp HTTP/1.1', [...MCP_HEADERS, 'Content-Length: 28000000', ...lines]));
    const bound = new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000).unref());
    const reply = await Promise.race([firstReply(socket), bound]);
    socket.destroy();
    return reply;
  };

  it('answers 401 with Connection: close to an unidentified peer announcing a 28 MB body, before any of it is sent', async () => {
    const reply = await replyToHeadOnly([`Host: 127.0.0.1:${service.port}`, 'X-Forwarded-User: mallory']);
    expect(reply).toMatchObject({ status: 401, headers: { connection: 'close' } });
    expect(JSON.parse(reply!.body)).toMatchObject({ error: { code: -32600 } });
  });

  it('answers 403 to a foreign Origin before any body is sent', async () => {
    const reply = await replyToHeadOnly([`Host: 127.0.0.1:${service.port}`, 'Origin: https://evil.example']);
    expect(reply).toMatchObject({ status: 403, headers: { connection: 'close' } });
  });
});

describe('HTTP edge: what all connections together may hold, and for how long', () => {
  const MAX_CONNECTIONS = 8;
  // Bodies up to about 2.3 MiB (1 MiB of images as Base64 plus 1 MiB); room for one such body at a time.
  const stack = useStack({
    config: {
      server: { max_buffered_bytes: 3 * 1024 * 1024, max_connections: MAX_CONNECTIONS, headers_timeout_ms: 1000, request_timeout_ms: 2000 },
      mcp: { images: { max_count: 1, max_bytes_per_image: 1024 * 1024, max_total_bytes: 1024 * 1024 }, files: { max_bytes: 1024 } },
    },
  });
  let service: ServiceProcess;

  beforeAll(() => {
    ({ service } = stack);
  });

  const upload = (bytes: number) => head('POST /mcp HTTP/1.1', [`Host: 127.0.0.1:${service.port}`, ...MCP_HEADERS, `Content-Length: ${bytes}`]);
  /** The first reply of `exchange` with `status`: the service handles sockets asynchronously, so a change shows after a while. */
  const replyWith = (status: number, exchange: () => Promise<{ status: number; headers: Record<string, string> }>) => {
    let last = 0;
    return pollUntil(
      async () => {
        const reply = await exchange();
        last = reply.status;
        return reply.status === status ? reply : undefined;
      },
      `an answer with status ${status}`,
      { everyMs: 100, lastSeen: () => String(last) },
    );
  };

  it('answers 503 with Connection: close while unfinished bodies hold server.max_buffered_bytes, and serves again once they are gone', async () => {
    const holder = await openUpload(service.port, upload(2_000_000));
    const busy = await replyWith(503, () => rawExchange(service.port, upload(2_000_000)));
    expect(busy.headers.connection).toBe('close');
    holder.destroy();
    const small = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } },
    });
    await replyWith(200, () => rawExchange(service.port, upload(Buffer.byteLength(small)).replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n') + small));
  });

  it('answers 503 past server.max_connections, still serves the health probes, and serves again once some close (issue 20)', async () => {
    const held = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => openUpload(service.port, '')));
    const get = (path: string) => rawExchange(service.port, head(`GET ${path} HTTP/1.1`, [`Host: 127.0.0.1:${service.port}`, 'Connection: close']));
    const refused = await get('/v1/models');
    expect([refused.status, refused.headers['retry-after']]).toEqual([503, '1']);
    expect((await get('/healthz')).status).toBe(200);
    expect([200, 503]).toContain((await get('/readyz')).status);
    for (const socket of held) socket.destroy();
    // Served again: whatever /v1/models answers without credentials, it is no longer the 503 of a full server.
    let last = 0;
    await pollUntil(async () => ((last = (await get('/v1/models')).status) !== 503 ? true : undefined), '/v1/models answered other than 503', {
      everyMs: 100,
      lastSeen: () => String(last),
    });
  });

  it('closes a connection that never finishes its headers (slowloris) or its body, at the configured timeouts', async () => {
    // Bounded at 15 s, far past the configured 1 s and 2 s; node's defaults are 60 s and 300 s.
    const headers = await rawExchange(service.port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${service.port}\r\nX-Slow: `, 15_000);
    expect(headers.closed).toBe(true);
    const body = await rawExchange(service.port, `${upload(100_000)}{"jsonrpc":"2.0",`, 15_000);
    expect(body.closed).toBe(true);
  });
});
