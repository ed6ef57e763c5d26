import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { lastToolResults, runTask as run, toolCall as call } from '../support/agent-tasks.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { fieldsOf, httpRawDispatch, modernMeta, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { ADMIN, as } from '../support/proxy-identity.js';
import { useProxiedStack } from '../support/proxy-service.js';
import type { ServiceProcess } from '../support/service-process.js';
import { startSwapper } from '../support/swap-race.js';
import { gate } from '../support/gate.js';

const QUOTA = 64 * 1024;
const MAX_FILES = 40;
const MAX_QUEUED = 3;
const RACE_SECONDS = Number(process.env.OAM_RACE_SECONDS ?? 3);

/** Issue 20 end to end: the service as a signed-in attacker meets it, behind the SSO proxy. */
describe('security round two (issue 20), behind an SSO proxy', () => {
  const stack = useProxiedStack({
    config: {
      workspace: { max_session_bytes: QUOTA, max_session_files: MAX_FILES, max_memory_bytes: 128 * 1024 * 1024 },
      queue: { max_queued_per_user: MAX_QUEUED },
    },
  });
  const { ollama } = stack;
  const toolResults = () => lastToolResults(ollama);
  let service: ServiceProcess;
  let db: DatabaseTarget;
  let base: string;
  let alice: Client;
  let bob: Client;
  const sessionDir = (sessionId: string) => join(stack.config.workspace, 'sessions', sessionId);

  beforeAll(() => void ({ service, database: db, base, alice, bob } = stack));

  it('finding 1: never serves a host file through a directory a command keeps swapping with a link (resources/read and admin download)', async () => {
    ollama.enqueue(call('write_file', { path: 'd/passwd', content: 'inside\n' }), { content: 'ok' });
    const { session_id } = await run(bob, 'make d');
    symlinkSync('/etc', join(sessionDir(session_id), 'l'));
    const swapper = startSwapper(sessionDir(session_id), 'd', 'l', RACE_SECONDS);
    const uri = `agent-session://${session_id}/files/d/passwd`;
    let leaked = 0;
    let served = 0;
    for (const until = Date.now() + RACE_SECONDS * 1000; Date.now() < until;) {
      const [read, download] = await Promise.allSettled([
        bob.readResource({ uri }),
        fetch(`${base}/admin/sessions/${session_id}/files/d/passwd`, { headers: ADMIN }).then(async (res) => ({
          status: res.status,
          text: await res.text(),
          nosniff: res.headers.get('x-content-type-options'),
        })),
      ]);
      const texts = [read.status === 'fulfilled' ? JSON.stringify(read.value) : String(read.reason), download.status === 'fulfilled' ? download.value.text : ''];
      leaked += texts.filter((text) => text.includes('root:')).length;
      served += texts.filter((text) => text.includes('inside')).length;
      if (download.status === 'fulfilled' && download.value.status === 200) expect(download.value.nosniff).toBe('nosniff');
    }
    expect(await swapper.done).toBeGreaterThan(1000);
    expect(leaked).toBe(0);
    expect(served).toBeGreaterThan(5);
  });

  it('finding 2: answers reads of FIFOs as not found at once, and a Task still writes files; /readyz stays ready', async () => {
    ollama.enqueue(call('write_file', { path: 'x.txt', content: 'x' }), { content: 'ok' });
    const { session_id } = await run(alice, 'make a session');
    execFileSync(
      'mkfifo',
      ['p1.txt', 'p2.txt', 'p3.txt', 'p4.txt', 'p5.txt'].map((name) => join(sessionDir(session_id), name)),
    );
    const started = Date.now();
    const reads = await Promise.allSettled([1, 2, 3, 4, 5].map((n) => alice.readResource({ uri: `agent-session://${session_id}/files/p${n}.txt` })));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(reads.map((read) => read.status === 'rejected' && (read.reason as { code: number }).code)).toEqual([-32602, -32602, -32602, -32602, -32602]);
    ollama.enqueue(call('write_file', { path: 'after.txt', content: 'still works' }), { content: 'wrote' });
    const after = await run(bob, 'write something');
    expect(after.final).toMatchObject({ status: 'completed', result: 'wrote' });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it('finding 5 (bound since issue 37): what a command makes past the quota or file limit is taken back, so the next command finds room', async () => {
    const third = Math.floor(QUOTA / 3) + 1024;
    ollama.enqueue(
      // Each file fits in the room left (RLIMIT_FSIZE), the three together do not.
      call('run_command', { command: `for f in a b c; do head -c ${third} /dev/zero > $f.bin; done` }),
      call('run_command', { command: 'head -c 100 /dev/zero > more.bin; echo exit=$?' }),
      call('run_command', { command: 'rm -f more.bin' }),
      call('run_command', { command: `mkdir many && cd many && touch $(seq 1 ${MAX_FILES + 10})` }),
      call('run_command', { command: 'touch one-more && ls one-more' }),
      call('run_command', { command: 'rm -rf one-more' }),
      call('write_file', { path: 'fine.txt', content: 'room again' }),
      { content: 'limits seen' },
    );
    const { final } = await run(bob, 'fill the workspace');
    expect(final).toMatchObject({ status: 'completed', result: 'limits seen' });
    const results = toolResults();
    expect(results[0]).toMatch(
      /^Error: after this command the session workspace would hold \d+ bytes, more than its quota of 65536 bytes.*; the 3 files and directories this command created were removed/,
    );
    expect(results[1]).toBe('exit code 0\nexit=0');
    expect(results[2]).toBe('exit code 0');
    // All it made is taken back: the MAX_FILES + 11 entries when the command ends first, fewer when the quota's watch
    // stops it mid-run (issue 37, ADR 0038), which of the two depends on the machine's speed.
    const made = /; the (\d+) files and directories this command created were removed/.exec(results[3]);
    expect(results[3]).toMatch(
      new RegExp(`^Error: after this command the session workspace would hold \\d+ files and directories, more than its limit of ${MAX_FILES} \\(workspace.max_session_files\\)`),
    );
    expect(Number(made?.[1])).toBeGreaterThan(0);
    expect(Number(made?.[1])).toBeLessThanOrEqual(MAX_FILES + 11);
    expect(results[4]).toBe('exit code 0\none-more');
    expect(results[5]).toBe('exit code 0');
    expect(results[6]).toBe('Created fine.txt (10 bytes)');
  });

  it('finding 4: a command that takes more memory than workspace.max_memory_bytes fails, the model is told why, and the next Task runs', async () => {
    ollama.enqueue(call('run_command', { command: 'python3 -c "bytearray(512*1024**2)"' }), { content: 'saw it' });
    const { final } = await run(bob, 'take memory');
    expect(final).toMatchObject({ status: 'completed', result: 'saw it' });
    expect(toolResults()[0]).toMatch(/MemoryError[\s\S]*\[the command ran out of memory: each process may use at most 134217728 bytes \(workspace.max_memory_bytes\)\]/);
    ollama.enqueue({ content: 'next one' });
    expect((await run(bob, 'next')).final).toMatchObject({ status: 'completed', result: 'next one' });
  });

  it('finding 8: answers resources/read with a uri that is no string with a short -32602, audited', async () => {
    const dispatch = httpRawDispatch(service.url, as('alice@example.com'));
    for (const uri of [42, null, {}, ['x']]) {
      const reply = await dispatch({ method: 'resources/read', params: { uri, _meta: modernMeta(false) } });
      expect(reply.kind).toBe('error');
      const { error } = reply as { error: { code: number; message: string } };
      expect(error.code).toBe(-32602);
      expect(error.message).toMatch(/^uri: must be a string \(got (a number|null|an object|an array)\)$/);
    }
    const events = await probe<{ detail: string }>(
      db,
      "SELECT detail FROM audit_events WHERE action = 'resources/read' AND outcome = 'rejected' AND detail LIKE '%invalid_input%' ORDER BY seq",
    );
    expect(events.map((event) => JSON.parse(event.detail).uri)).toEqual(['a number', 'null', 'an object', 'an array']);
  });

  it("finding 6: refuses one user's Tasks past queue.max_queued_per_user on every surface (audited), and another user's Task runs next", async () => {
    // It holds the worker until the queue behind it has been filled, refused and cancelled (a timed delay could end
    // it first, and one of alice's queued Tasks would start).
    const checked = gate();
    ollama.enqueue({ content: 'occupying', heldUntil: checked.opened });
    let busy: Record<string, string>;
    let bobs: Record<string, string>;
    try {
      const chats = ollama.workChats.length;
      busy = fieldsOf(textOf(await alice.callTool({ name: 'agent_run', arguments: { request: 'occupy the worker' } })));
      // Running (its chat reached the model), so no longer one of alice's queued Tasks.
      await ollama.waitForChats(chats + 1);
      const queued: string[] = [];
      for (let i = 0; i < MAX_QUEUED; i++) queued.push(fieldsOf(textOf(await alice.callTool({ name: 'agent_run', arguments: { request: `flood ${i}` } }))).task_id);
      const refused = await alice.callTool({ name: 'agent_run', arguments: { request: 'one too many' } });
      expect(refused).toMatchObject({ isError: true });
      expect(textOf(refused)).toMatch(/^Too many queued tasks: you already have 3 tasks waiting, the most one user may queue \(queue.max_queued_per_user: 3\)/);
      const chat = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...as('alice@example.com'), 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'ollama-agent', messages: [{ role: 'user', content: 'chat flood' }] }),
      });
      expect([chat.status, chat.headers.get('retry-after')]).toEqual([429, '30']);
      expect(await chat.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'queue_full' } });
      const a2a = await fetch(`${base}/a2a`, {
        method: 'POST',
        headers: { ...as('alice@example.com'), 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'a2a flood' }] }, configuration: { returnImmediately: true } },
        }),
      });
      expect(JSON.stringify(await a2a.json())).toMatch(/queue_full: you already have 3 tasks waiting/);
      const rejected = await probe<{ action: string }>(db, "SELECT action FROM audit_events WHERE outcome = 'rejected' AND detail LIKE '%max_queued_per_user%' ORDER BY seq");
      expect(rejected.map((event) => event.action)).toEqual(['tools/call agent_run', 'chat.completions', 'a2a SendMessage']);
      // Bob's one Task waits behind one of alice's at most: alice is being served, bob was never.
      bobs = fieldsOf(textOf(await bob.callTool({ name: 'agent_run', arguments: { request: 'bob waits' } })));
      const position = async (taskId: string) =>
        ((await (await fetch(`${base}/admin/tasks/${taskId}`, { headers: ADMIN })).json()) as { queue_position: number | null }).queue_position;
      expect(await position(bobs.task_id)).toBe(1);
      expect(fieldsOf(textOf(await bob.callTool({ name: 'agent_status', arguments: { task_id: bobs.task_id } })))).toMatchObject({
        status: 'queued',
        current_task: 'queue position 1',
      });
      expect(await Promise.all(queued.map(position))).toEqual([2, 3, 4]);
      for (const id of queued) expect((await fetch(`${base}/admin/tasks/${id}/cancel`, { headers: ADMIN, method: 'POST' })).status).toBe(200);
      ollama.enqueue({ content: 'bob served' });
    } finally {
      checked.open();
    }
    const statusOf = async (client: Client, taskId: string) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } }));
    expect(await waitForTerminal((id) => statusOf(bob, id), bobs.task_id)).toMatchObject({ status: 'completed', result: 'bob served' });
    expect(await waitForTerminal((id) => statusOf(alice, id), busy.task_id)).toMatchObject({ status: 'completed' });
  });

  it('also seen: refuses a POST that a browser calls cross-site without an Origin on Chat and A2A', async () => {
    for (const path of ['/v1/chat/completions', '/a2a']) {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { ...as('alice@example.com'), 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'cross-site' },
        body: '{}',
      });
      expect([path, res.status]).toEqual([path, 403]);
    }
    const sameOrigin = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...as('alice@example.com'), 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'same-origin' },
      body: '{}',
    });
    expect(sameOrigin.status).toBe(400);
  });
});
