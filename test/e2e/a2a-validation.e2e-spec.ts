import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { count, probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';

const V1: Record<string, string> = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
const as = (user: string) => ({ 'X-Forwarded-User': user });
const message = (fields: Record<string, unknown> = {}) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }], ...fields });

/**
 * Issue 43: what the official A2A TCK (a2aproject/a2a-tck, JSON-RPC, A2A-Version 1.0) found at the A2A
 * edge, each checked with a raw JSON-RPC request: the envelope, the version as a request parameter,
 * Message.role, historyLength, data parts, ListTasks' statusTimestampAfter. Client-made contextIds are
 * in a2a-contexts.e2e-spec.ts.
 */
describe('A2A 1.0 requests the TCK checks, raw JSON-RPC', () => {
  const stack = useStack({ config: { auth: { mode: 'proxy_headers', trusted_proxies: ['127.0.0.1/32', '::1/128'] }, queue: { progress_poll_ms: 20 } } });
  let db: DatabaseTarget;
  let base: string;

  const post = async (body: unknown, { headers = V1, path = '/a2a', user = 'alice' } = {}) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { ...headers, ...as(user) }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } } };
  };
  const call = (method: string, params: unknown, user = 'alice') => post({ jsonrpc: '2.0', id: 7, method, params }, { user });
  const rejected = (action: string) => probe<{ detail: string }>(db, 'SELECT detail FROM audit_events WHERE action = ? AND outcome = ? ORDER BY seq', action, 'rejected');

  beforeAll(() => {
    ({ database: db, base } = stack);
  });

  it('answers an invalid JSON-RPC envelope with -32600 (HTTP 200), echoing only a valid id, audited, before any method runs', async () => {
    const before = await count(db, 'tasks');
    const cases: [unknown, unknown, RegExp][] = [
      [{ jsonrpc: '1.0', id: 1, method: 'SendMessage', params: { message: message() } }, 1, /jsonrpc must be exactly "2.0"/],
      [{ id: 'a', method: 'SendMessage', params: { message: message() } }, 'a', /jsonrpc must be exactly "2.0"/],
      [{ jsonrpc: '2.0', id: 2, params: { message: message() } }, 2, /method must be a non-empty string/],
      [{ jsonrpc: '2.0', id: { bad: 'type' }, method: 'SendMessage', params: { message: message() } }, null, /id must be a string, an integer or null/],
      [{ jsonrpc: '2.0', id: 1.5, method: 'GetTask', params: { id: randomUUID() } }, null, /id must be/],
      [[{ jsonrpc: '2.0', id: 3, method: 'GetTask', params: { id: randomUUID() } }], null, /batches are not supported/],
      ['SendMessage', null, /one JSON-RPC request object/],
    ];
    for (const [body, id, reason] of cases) {
      const reply = await post(body);
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32600, message: expect.stringMatching(reason) } });
    }
    // Without the header (0.3) the same answer: the check comes before the SDK picks a handler.
    expect((await post({ jsonrpc: '2.0', id: 4, params: {} }, { headers: { 'Content-Type': 'application/json' } })).body.error?.code).toBe(-32600);
    // A well-formed envelope still reaches the SDK: an unknown method, invalid params.
    expect((await post({ jsonrpc: '2.0', id: 5, method: 'SendMessageXXX', params: {} })).body.error?.code).toBe(-32601);
    expect((await post({ jsonrpc: '2.0', id: 6, method: 'SendMessage', params: { '': 'x' } })).body.error?.code).toBe(-32602);
    expect(await count(db, 'tasks')).toBe(before);
    const audited = await rejected('a2a.request_rejected');
    expect(audited).toHaveLength(cases.length + 1);
    expect(JSON.parse(audited[0].detail)).toEqual({ reason: 'Invalid Request: jsonrpc must be exactly "2.0"' });
  });

  it('takes A2A-Version as a request parameter (§3.6.1) on /a2a and on the Agent Card; the header wins', async () => {
    const getTask = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: randomUUID() } };
    const plain = { 'Content-Type': 'application/json' };
    // GetTask is a 1.0 method: read as 0.3 it is unknown.
    expect((await post(getTask, { headers: plain })).body.error?.code).toBe(-32601);
    expect((await post(getTask, { headers: plain, path: '/a2a?A2A-Version=1.0' })).body.error).toMatchObject({ code: -32001, message: expect.stringMatching(/not found/i) });
    expect((await post(getTask, { headers: plain, path: '/a2a?a2a-version=1.0' })).body.error?.code).toBe(-32001);
    expect((await post(getTask, { headers: { ...plain, 'A2A-Version': '0.3' }, path: '/a2a?A2A-Version=1.0' })).body.error?.code).toBe(-32601);
    expect((await post(getTask, { headers: plain, path: '/a2a?A2A-Version=9.9' })).body.error).toMatchObject({ message: expect.stringMatching(/9\.9.*not supported/) });
    const card = async (query: string) => (await fetch(`${base}/.well-known/agent-card.json${query}`, { headers: as('alice') })).json();
    expect(await card('?A2A-Version=1.0')).toHaveProperty('supportedInterfaces');
    // Without a version the card is 0.3's shape.
    expect(await card('')).toHaveProperty('protocolVersion', '0.3');
  });

  it('refuses a message whose role is not ROLE_USER (missing, ROLE_UNSPECIFIED, ROLE_AGENT), storing nothing', async () => {
    const before = [await count(db, 'tasks'), await count(db, 'sessions')];
    const { role: _omitted, ...roleless } = message();
    for (const sent of [roleless, message({ role: 'ROLE_UNSPECIFIED' }), message({ role: 'ROLE_AGENT' }), message({ role: 'user' })]) {
      const reply = await call('SendMessage', { message: sent });
      expect(reply.body.error).toMatchObject({ code: -32602, message: 'message.role: must be ROLE_USER (a message from the client)' });
    }
    expect((await call('SendStreamingMessage', { message: message({ role: 'ROLE_AGENT' }) })).body.error?.code).toBe(-32602);
    expect([await count(db, 'tasks'), await count(db, 'sessions')]).toEqual(before);
    const audited = await probe(db, "SELECT 1 FROM audit_events WHERE action LIKE 'a2a Send%' AND outcome = 'rejected' AND detail LIKE '%message.role%'");
    expect(audited).toHaveLength(5);
  });

  it('refuses a data part with ContentTypeNotSupportedError (-32005), and the card offers no application/json input', async () => {
    const reply = await call('SendMessage', { message: message({ parts: [{ text: 'look' }, { data: { a: 1 }, mediaType: 'application/json' }] }) });
    expect(reply.body.error).toMatchObject({ code: -32005, message: expect.stringMatching(/^message\.parts\[1\]: content type not supported/) });
    const card = await (await fetch(`${base}/.well-known/agent-card.json`, { headers: { ...as('alice'), 'A2A-Version': '1.0' } })).json();
    expect(card.defaultInputModes).not.toContain('application/json');
    expect(card.skills.flatMap((skill: { inputModes: string[] }) => skill.inputModes)).not.toContain('application/json');
  });

  it('refuses a negative or fractional historyLength on GetTask, ListTasks and SendMessage (-32602)', async () => {
    const done = await call('SendMessage', { message: message() });
    const id = (done.body.result?.task as { id: string }).id;
    expect((await call('GetTask', { id, historyLength: 0 })).body.result).toMatchObject({ id });
    for (const historyLength of [-1, -5, 1.5]) {
      expect((await call('GetTask', { id, historyLength })).body.error).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/^historyLength: must be a non-negative integer/),
      });
      expect((await call('ListTasks', { historyLength })).body.error?.code).toBe(-32602);
    }
    expect((await call('SendMessage', { message: message(), configuration: { historyLength: -1 } })).body.error?.code).toBe(-32602);
  });

  it('filters ListTasks by statusTimestampAfter (at or after the Task’s status timestamp), and refuses what is not an RFC 3339 date-time', async () => {
    const sent = await call('SendMessage', { message: message() }, 'carol');
    const task = sent.body.result?.task as { id: string; status: { timestamp: string } };
    const listed = async (statusTimestampAfter: string) => ((await call('ListTasks', { statusTimestampAfter }, 'carol')).body.result?.tasks as { id: string }[]).map((t) => t.id);
    expect(await listed('2030-01-01T00:00:00Z')).toEqual([]);
    expect(await listed('2000-01-01T00:00:00Z')).toEqual([task.id]);
    expect(await listed(task.status.timestamp)).toEqual([task.id]);
    // One microsecond later is after it: sub-millisecond digits round up.
    expect(await listed(task.status.timestamp.replace('Z', '001Z'))).toEqual([]);
    // The same instant written with an offset.
    const at = new Date(Date.parse(task.status.timestamp) - 3_600_000).toISOString().replace('Z', '-01:00');
    expect(await listed(at)).toEqual([task.id]);
    expect(((await call('ListTasks', { statusTimestampAfter: '2030-01-01T00:00:00Z' }, 'carol')).body.result as { totalSize: number }).totalSize).toBe(0);
    for (const bad of ['-1', '2024', 'yesterday', '2026-02-30T00:00:00Z', '2026-01-01 00:00:00Z', '2026-01-01T24:00:00Z']) {
      expect((await call('ListTasks', { statusTimestampAfter: bad }, 'carol')).body.error).toMatchObject({
        code: -32602,
        message: expect.stringMatching(/^statusTimestampAfter: must be an RFC 3339/),
      });
    }
  });
});
