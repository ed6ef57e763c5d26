import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { count, probe, type DatabaseTarget } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';

const as = (user: string) => ({ 'Content-Type': 'application/json', 'A2A-Version': '1.0', 'X-Forwarded-User': user });

type A2aTask = { id: string; contextId: string; metadata: { session_id: string } };

/**
 * Issue 43: a contextId the client made up is the caller's own name for a conversation (A2A 1.0
 * §3.4.1 lets an agent accept it): the first message under it starts a session, later ones continue
 * it, ListTasks filters by it, and another user's identical name is another conversation. Raw
 * JSON-RPC, as the TCK sends it.
 */
describe('A2A client-made contextIds, scoped to their owner', () => {
  const stack = useStack({ config: { auth: { mode: 'proxy_headers', trusted_proxies: ['127.0.0.1/32', '::1/128'] }, queue: { progress_poll_ms: 20 } } });
  const ollama = stack.ollama;
  let db: DatabaseTarget;
  let base: string;

  const call = async (user: string, method: string, params: unknown) => {
    const res = await fetch(`${base}/a2a`, { method: 'POST', headers: as(user), body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    return (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
  };
  const send = async (user: string, text: string, contextId: string) => {
    const reply = await call(user, 'SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], contextId } });
    if (!reply.result) throw new Error(`SendMessage failed: ${JSON.stringify(reply.error)}`);
    return reply.result.task as A2aTask;
  };
  const list = async (user: string, contextId: string) => ((await call(user, 'ListTasks', { contextId })).result!.tasks as A2aTask[]).map((task) => task.id);
  const userTurns = () =>
    ollama.workChats
      .at(-1)!
      .body.messages.filter((m) => m.role !== 'system')
      .map((m) => m.content);

  beforeAll(() => {
    ({ database: db, base } = stack);
  });

  it('starts a conversation under a new name, continues it under the same name, and shows the name as the contextId everywhere', async () => {
    ollama.enqueue({ content: 'first answer' }, { content: 'second answer' });
    const first = await send('alice', 'first question', 'alice-chat-1');
    expect(first.contextId).toBe('alice-chat-1');
    const second = await send('alice', 'second question', 'alice-chat-1');
    expect(second).toMatchObject({ contextId: 'alice-chat-1', metadata: { session_id: first.metadata.session_id } });
    expect(userTurns()).toEqual(['first question', 'first answer', 'second question']);
    expect(await list('alice', 'alice-chat-1')).toEqual([second.id, first.id]);
    expect((await call('alice', 'GetTask', { id: first.id })).result).toMatchObject({ contextId: 'alice-chat-1', history: [{ contextId: 'alice-chat-1' }] });
    // The session id still names it too, as on MCP and the Chat API.
    expect(await list('alice', first.metadata.session_id)).toEqual([second.id, first.id]);
    const [named] = await probe<{ detail: string; session_id: string }>(db, "SELECT detail, session_id FROM audit_events WHERE action = 'a2a context named' AND actor = 'alice'");
    expect(named).toEqual({ detail: JSON.stringify({ context_id: 'alice-chat-1' }), session_id: first.metadata.session_id });
  });

  it('keeps another user’s identical contextId a conversation of their own', async () => {
    ollama.enqueue({ content: 'for alice' }, { content: 'for bob' });
    const alices = await send('alice', 'alice asks', 'shared-name');
    const bobs = await send('bob', 'bob asks', 'shared-name');
    expect(bobs.contextId).toBe('shared-name');
    expect(bobs.metadata.session_id).not.toBe(alices.metadata.session_id);
    expect(userTurns()).toEqual(['bob asks']);
    expect(await list('alice', 'shared-name')).toEqual([alices.id]);
    expect(await list('bob', 'shared-name')).toEqual([bobs.id]);
    expect(await list('bob', alices.metadata.session_id)).toEqual([]);
  });

  it('maps one name to one session when several first messages race', async () => {
    const tasks = await Promise.all([1, 2, 3, 4].map((n) => send('dave', `racing ${n}`, 'raced-name')));
    expect(new Set(tasks.map((task) => task.metadata.session_id)).size).toBe(1);
    const owned = async (table: string) => Number((await probe<{ n: number | string }>(db, `SELECT COUNT(*) AS n FROM ${table} WHERE owner = 'dave'`))[0].n);
    expect([await owned('a2a_contexts'), await owned('sessions')]).toEqual([1, 1]);
  });

  it('refuses a contextId over 256 characters, blank, or with control characters (-32602), storing nothing', async () => {
    const before = [await count(db, 'sessions'), await count(db, 'a2a_contexts'), await count(db, 'tasks')];
    for (const contextId of ['x'.repeat(257), '   ', 'line\nbreak', 'bell\u0007']) {
      const reply = await call('erin', 'SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'x' }], contextId } });
      expect(reply.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^message\.contextId: /) });
    }
    expect([await count(db, 'sessions'), await count(db, 'a2a_contexts'), await count(db, 'tasks')]).toEqual(before);
    expect(await probe(db, "SELECT 1 FROM audit_events WHERE actor = 'erin' AND action = 'a2a SendMessage' AND outcome = 'rejected'")).toHaveLength(4);
    // The longest name is taken.
    ollama.enqueue({ content: 'ok' });
    expect((await send('erin', 'long name', 'y'.repeat(256))).contextId).toBe('y'.repeat(256));
  });
});
