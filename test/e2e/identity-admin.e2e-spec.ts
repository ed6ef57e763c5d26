import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { fieldsOf, httpRawDispatch, mcpPostHeaders, modernClient, modernMeta, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { ADMIN, ADMIN_GROUP, as, PROXY_AUTH } from '../support/proxy-identity.js';
import type { ServiceProcess } from '../support/service-process.js';
import { gate } from '../support/gate.js';

/** A raw HTTP request, for what fetch cannot send (repeated header lines). */
function rawRequest(port: number, path: string, headers: Record<string, string | string[]>, body?: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: body ? 'POST' : 'GET', headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('behind an SSO proxy (auth.mode proxy_headers): identity, per-user isolation, admin surface', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, audit: { checkpoint_every: 5 } } });
  const { ollama } = stack;
  let service: ServiceProcess;
  let db: DatabaseTarget;
  let alice: Client;
  let bob: Client;
  let base: string;

  const admin = (path: string, headers: Record<string, string> = ADMIN, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { ...headers, ...(init.headers ?? {}) } });
  const statusFor = (client: Client) => async (taskId: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));

  beforeAll(async () => {
    ({ service, base, database: db } = stack);
    alice = stack.closeOnStop(await modernClient(service.url, as('alice@example.com')));
    bob = stack.closeOnStop(await modernClient(service.url, as('bob@example.com')));
  });

  it('refuses a trusted peer that sends no identity (T2.2), on MCP and admin routes alike', async () => {
    await expect(modernClient(service.url)).rejects.toThrow();
    expect((await fetch(`${base}/admin/audit`)).status).toBe(401);
    const [event] = await probe<{ action: string; actor: string }>(db, "SELECT action, actor FROM audit_events WHERE action = 'auth.fail' ORDER BY seq DESC LIMIT 1");
    expect(event).toEqual({ action: 'auth.fail', actor: 'anonymous' });
  });

  it('refuses repeated, comma-joined or oversized identity headers (T2.3)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: modernMeta(false) } });
    const mcpHeaders = mcpPostHeaders('server/discover');
    for (const user of [['alice@example.com', 'admin'], 'alice@example.com, admin', 'x'.repeat(300)]) {
      const response = await rawRequest(service.port, '/mcp', { ...mcpHeaders, 'X-Forwarded-User': user }, body);
      expect(response.status).toBe(401);
    }
    const actors = await probe<{ actor: string }>(db, 'SELECT DISTINCT actor FROM audit_events');
    expect(actors.map((row) => row.actor)).not.toContain('alice@example.com, admin');
  });

  it('refuses an identity header sent twice, or comma-joined, whatever the other identity headers say: no fallback to the email header', async () => {
    const verify = (headers: Record<string, string | string[]>) => rawRequest(service.port, '/admin/audit/verify', headers);
    const email = 'mallory@example.com';
    const cases: Record<string, string | string[]>[] = [
      { 'X-Forwarded-User': ['carol@example.com', 'carol@example.com'], 'X-Forwarded-Email': email, 'X-Forwarded-Groups': ADMIN_GROUP },
      { 'X-Forwarded-User': 'carol@example.com, x', 'X-Forwarded-Email': email, 'X-Forwarded-Groups': ADMIN_GROUP },
      { 'X-Forwarded-Email': [email, email], 'X-Forwarded-Groups': ADMIN_GROUP },
      { 'X-Forwarded-User': 'carol@example.com', 'X-Forwarded-Email': `${email},${email}`, 'X-Forwarded-Groups': ADMIN_GROUP },
      { 'X-Forwarded-User': 'carol@example.com', 'X-Forwarded-Groups': ['dev', ADMIN_GROUP] },
    ];
    for (const headers of cases) expect([headers, (await verify(headers)).status]).toEqual([headers, 401]);
    const actors = await probe<{ actor: string }>(db, 'SELECT DISTINCT actor FROM audit_events');
    expect(actors.map((row) => row.actor)).not.toContain(email);
  });

  it('decodes identity headers as UTF-8 (raw bytes on the wire, as oauth2-proxy sends them), refuses bytes that are not, and stores only IP addresses as the source', async () => {
    // Node writes header strings as Latin-1: a UTF-8 name re-encoded that way goes out as its UTF-8 bytes.
    const wire = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
    const ok = await rawRequest(service.port, '/admin/audit/verify', {
      'X-Forwarded-User': wire('山田 太郎'),
      'X-Forwarded-Groups': wire(`開発, ${ADMIN_GROUP}`),
      'X-Forwarded-For': '<svg onload=alert(1)>',
    });
    expect(ok.status).toBe(200);
    const [event] = await probe<{ actor: string; groups: string; source: string }>(
      db,
      "SELECT actor, groups, source FROM audit_events WHERE action = 'admin.audit_verify' ORDER BY seq DESC LIMIT 1",
    );
    expect({ ...event, groups: JSON.parse(event.groups) }).toEqual({ actor: '山田 太郎', groups: ['開発', ADMIN_GROUP], source: '127.0.0.1' });
    expect((await rawRequest(service.port, '/admin/audit/verify', { 'X-Forwarded-User': '\xff\xfeyamada', 'X-Forwarded-Groups': ADMIN_GROUP })).status).toBe(401);
  });

  it("keeps each user's Tasks and sessions to that user (T1.8)", async () => {
    ollama.enqueue({ content: 'for alice only' });
    const accepted = fieldsOf(textOf(await alice.callTool({ name: 'agent_run', arguments: { request: 'private work' } })));
    expect((await waitForTerminal(statusFor(alice), accepted.task_id)).result).toBe('for alice only');
    const notFound = `task_id: ${accepted.task_id}\nstatus: failed\nmessage: タスク ${accepted.task_id} が見つかりません。`;
    expect(await statusFor(bob)(accepted.task_id)).toBe(notFound);
    const bobRaw = httpRawDispatch(service.url, as('bob@example.com'));
    const unknownGet = await bobRaw({ method: 'tasks/get', params: { taskId: '00000000-0000-4000-8000-000000000000', _meta: modernMeta(true) } });
    const othersGet = await bobRaw({ method: 'tasks/get', params: { taskId: accepted.task_id, _meta: modernMeta(true) } });
    expect(othersGet).toEqual(unknownGet);
    expect(await bobRaw({ method: 'tasks/cancel', params: { taskId: accepted.task_id, _meta: modernMeta(true) } })).toMatchObject({ kind: 'error', error: { code: -32602 } });
    const hijack = await bob.callTool({ name: 'agent_run', arguments: { request: 'continue', session_id: accepted.session_id } });
    expect(hijack.isError).toBe(true);
    expect(textOf(hijack)).toMatch(/does not exist/);
    const [{ owner }] = await probe<{ owner: string }>(db, 'SELECT owner FROM tasks WHERE id = ?', accepted.task_id);
    expect(owner).toBe('alice@example.com');
  });

  it('refuses every admin route to a non-admin (403) and to no identity (401), enumerated from the OpenAPI document (T2.9); own views (x-own-view) answer a user with their own data only', async () => {
    const document = (await (await fetch(`${base}/admin/openapi.json`)).json()) as { paths: Record<string, Record<string, { 'x-own-view'?: boolean; requestBody?: unknown }>> };
    const routes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, own: operation['x-own-view'] === true, body: operation.requestBody !== undefined })),
    );
    const adminRoutes = routes.filter((route) => route.path.startsWith('/admin/'));
    expect(adminRoutes.length).toBeGreaterThanOrEqual(8);
    const concrete = (path: string) => path.replace('{id}', '00000000-0000-4000-8000-000000000000').replace('{seq}', '1').replace('{option}', '1');
    for (const { path, method, own, body } of adminRoutes) {
      const url = `${base}${concrete(path).replace('{decision}', 'approve')}${path.endsWith('/export') ? '?format=jsonl' : ''}`;
      // A route that takes a body (a schedule, a trigger) answers this empty request 400 once the caller may call it.
      const served = body ? [200, 400, 404] : [200, 404];
      const asAlice = (await fetch(url, { method: method.toUpperCase(), headers: as('alice@example.com') })).status;
      expect([method, path, own ? served.includes(asAlice) : asAlice]).toEqual([method, path, own ? true : 403]);
      expect([method, path, (await fetch(url, { method: method.toUpperCase() })).status]).toEqual([method, path, 401]);
      expect([method, path, served.includes((await fetch(url, { method: method.toUpperCase(), headers: ADMIN })).status)]).toEqual([method, path, true]);
    }
    const denied = await probe<{ n: number }>(db, "SELECT COUNT(*) AS n FROM audit_events WHERE action LIKE 'admin.%' AND outcome = 'rejected' AND actor = 'alice@example.com'");
    expect(Number(denied[0].n)).toBe(adminRoutes.filter((route) => !route.own).length);
    // The committed copy is what integrators read; `npm run openapi` regenerates it.
    expect(document).toEqual(JSON.parse(readFileSync(join(service.root, 'docs/openapi.json'), 'utf8')));
  });

  it('lets an admin search, page, export and verify the audit log, and review a Task with its trace', async () => {
    ollama.enqueue({ toolCalls: [{ name: 'list_dir', arguments: {} }] }, { content: 'reviewed' });
    const taskId = fieldsOf(textOf(await alice.callTool({ name: 'agent_run', arguments: { request: '=HYPERLINK("http://evil")' } }))).task_id;
    await waitForTerminal(statusFor(alice), taskId);

    const page = (await (await admin(`/admin/audit?task_id=${taskId}&actor=alice@example.com&limit=1`)).json()) as {
      items: { action: string; source: string; groups: string[] }[];
      next_cursor: string;
    };
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ source: '127.0.0.1', groups: ['dev'] });
    const next = (await (await admin(`/admin/audit?task_id=${taskId}&actor=alice@example.com&limit=1&cursor=${page.next_cursor}`)).json()) as { items: unknown[] };
    expect(next.items).toHaveLength(1);
    expect((await admin('/admin/audit?limit=5000')).status).toBe(400);
    expect((await admin('/admin/audit?bogus=1')).status).toBe(400);
    expect((await admin('/admin/audit?cursor=nope')).status).toBe(400);
    // Out of the integer range of PostgreSQL's seq columns (a 500 there before): no cursor or event of ours.
    const tampered = Buffer.from(JSON.stringify({ seq: 1e300 })).toString('base64url');
    for (const path of [`/admin/audit?cursor=${tampered}`, `/admin/tasks?cursor=${tampered}`, '/admin/audit/99999999999', '/admin/audit/1e300']) {
      expect([path, (await admin(path)).status]).toEqual([path, 400]);
    }

    const jsonl = await (await admin(`/admin/audit/export?format=jsonl&task_id=${taskId}`)).text();
    const lines = jsonl
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { action: string });
    expect(lines.map((line) => line.action)).toEqual(expect.arrayContaining(['tools/call agent_run', 'task.status']));
    const csv = await (await admin(`/admin/audit/export?format=csv&task_id=${taskId}&action=tools/call%20agent_run`)).text();
    expect(csv.split('\n')[0]).toBe('seq,at,actor,groups,source,transport,client,action,outcome,task_id,session_id,detail,prev_hash,hash');
    expect(csv).not.toMatch(/(^|,)"=HYPERLINK/m);

    expect(await (await admin('/admin/audit/verify')).json()).toMatchObject({ ok: true, first_bad_seq: null });
    // Against the latest checkpoint the service logged (what an auditor takes from the platform logs).
    const [, seq, hash] = [...service.stderr.matchAll(/audit checkpoint seq=(\d+) hash=([0-9a-f]{64})/g)].at(-1)!;
    expect(await (await admin(`/admin/audit/verify?checkpoint_seq=${seq}&checkpoint_hash=${hash}`)).json()).toMatchObject({ ok: true });
    const beyond = Number(seq) + 1_000_000;
    expect(await (await admin(`/admin/audit/verify?checkpoint_seq=${beyond}&checkpoint_hash=${hash}`)).json()).toMatchObject({ ok: false });
    expect((await admin(`/admin/audit/verify?checkpoint_seq=${seq}`)).status).toBe(400);
    expect((await admin(`/admin/audit/verify?checkpoint_seq=${seq}&checkpoint_hash=xyz`)).status).toBe(400);
    const task = (await (await admin(`/admin/tasks/${taskId}`)).json()) as { owner: string; trace: { kind: string; name: string }[] };
    expect(task.owner).toBe('alice@example.com');
    expect(task.trace.map((step) => `${step.kind}:${step.name}`)).toEqual(expect.arrayContaining(['tool_call:list_dir', 'model_call:chat']));
    const list = (await (await admin('/admin/tasks?owner=alice@example.com&status=completed')).json()) as { items: { task_id: string }[] };
    expect(list.items.map((item) => item.task_id)).toContain(taskId);
    const reads = await probe<{ n: number }>(
      db,
      "SELECT COUNT(*) AS n FROM audit_events WHERE action IN ('admin.audit_read', 'admin.audit_export', 'admin.audit_verify', 'admin.task_read') AND outcome = 'ok'",
    );
    expect(Number(reads[0].n)).toBeGreaterThanOrEqual(5);
  });

  it("lets an admin cancel any user's queued Task and see the session", async () => {
    // The first Task holds the worker until the second is cancelled (a timed delay could end first and let it run).
    const cancelled = gate();
    ollama.enqueue({ content: 'slow', heldUntil: cancelled.opened });
    await alice.callTool({ name: 'agent_run', arguments: { request: 'occupy' } });
    const queued = fieldsOf(textOf(await alice.callTool({ name: 'agent_run', arguments: { request: 'to be cancelled' } })));
    try {
      const cancel = await admin(`/admin/tasks/${queued.task_id}/cancel`, ADMIN, { method: 'POST' });
      expect(cancel.status).toBe(200);
      expect(await cancel.json()).toMatchObject({ status: 'cancelled' });
    } finally {
      cancelled.open();
    }
    const session = (await (await admin(`/admin/sessions/${queued.session_id}`)).json()) as { owner: string; tasks: { status: string }[] };
    expect(session).toMatchObject({ owner: 'alice@example.com', tasks: [{ status: 'cancelled' }] });
    const [event] = await probe<{ actor: string }>(db, "SELECT actor FROM audit_events WHERE task_id = ? AND action = 'task.status'", queued.task_id);
    expect(event.actor).toBe('carol@example.com');
  });

  it('answers /healthz, and /readyz with the database and the model checked: which dependency to anyone, why only to admins and the log', async () => {
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready', checks: { database: 'ok', ollama: 'ok', files: 'ok' } });
    ollama.models = ['other-model:latest'];
    const notReady = await fetch(`${base}/readyz`, { headers: as('alice@example.com') });
    expect(notReady.status).toBe(503);
    expect(await notReady.text()).toBe(JSON.stringify({ status: 'not_ready', checks: { database: 'ok', ollama: 'unavailable', files: 'ok' } }));
    const detailed = await admin('/admin/readyz');
    expect(detailed.status).toBe(503);
    expect(await detailed.json()).toEqual({
      status: 'not_ready',
      checks: { database: { ok: true }, ollama: { ok: false, error: 'model test-model is not pulled' }, files: { ok: true } },
    });
    expect(service.stderr).toMatch(/ollama: not ready: model test-model is not pulled/);
    ollama.models = ['test-model:latest'];
    expect((await admin('/admin/readyz')).status).toBe(200);
  });
});

describe('identity headers from an untrusted peer (T2.1, T2.5)', () => {
  const stack = useStack({ config: { auth: { mode: 'proxy_headers', trusted_proxies: ['10.9.9.9/32'] } } });

  it('refuses a spoofed identity, audits it, creates nothing, and X-Forwarded-For does not make the peer trusted', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'agent_run', arguments: { request: 'spoof' }, _meta: modernMeta(false) } });
    const headers = { ...mcpPostHeaders('tools/call', 'agent_run'), 'X-Forwarded-User': 'admin', 'X-Forwarded-For': '10.9.9.9' };
    const response = await fetch(stack.service.url, { method: 'POST', headers, body });
    expect(response.status).toBe(401);
    const [event] = await probe<{ action: string; source: string }>(stack.database, "SELECT action, source FROM audit_events WHERE action = 'auth.untrusted_identity_header'");
    expect(event).toEqual({ action: 'auth.untrusted_identity_header', source: '127.0.0.1' });
    expect(await probe(stack.database, 'SELECT id FROM tasks')).toEqual([]);
  });
});

describe('Ollama behind an authenticating reverse proxy (ollama.headers)', () => {
  const TOKEN = 'ollama-proxy-token-0123456789';
  const proxies: Server[] = [];

  /** What nginx or Caddy in front of Ollama does with `auth_request`/`basicauth`: 401 without the header. Returns its URL. */
  const authenticatingProxy = async (ollamaUrl: string) => {
    const proxy = createServer((req, res) => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401, { 'Content-Type': 'text/plain' }).end('unauthorized');
      const upstream = httpRequest(`${ollamaUrl}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    proxies.push(proxy);
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  };
  /** A service whose scripted Ollama is behind its own such proxy, sending `headers` (ollama.headers) to it. */
  const behindProxy = (headers: Record<string, string>) => useStack({ config: async (ollamaUrl) => ({ ollama: { host: await authenticatingProxy(ollamaUrl), headers } }) });
  const withToken = behindProxy({ Authorization: `Bearer ${TOKEN}` });
  const without = behindProxy({});

  // After the stacks' own afterAll: the services are gone by then.
  afterAll(async () => {
    for (const proxy of proxies) {
      proxy.closeAllConnections();
      await new Promise((done) => proxy.close(done));
    }
  });

  const readiness = async (service: ServiceProcess) => (await fetch(service.url.replace(/\/mcp$/, '/readyz'))).json();

  it('sends the configured headers with every request to Ollama, and never logs them', async () => {
    expect(await readiness(withToken.service)).toEqual({ status: 'ready', checks: { database: 'ok', ollama: 'ok', files: 'ok' } });
    expect(await readiness(without.service)).toEqual({ status: 'not_ready', checks: { database: 'ok', ollama: 'unavailable', files: 'ok' } });
    expect(without.service.stderr).toMatch(/ollama: not ready: .*401/);
    for (const { service } of [withToken, without]) expect(service.stderr).not.toContain(TOKEN);
  });
});
