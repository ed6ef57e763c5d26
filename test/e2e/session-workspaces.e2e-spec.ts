import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastToolResults, runTask as run, toolCall as call } from '../support/agent-tasks.js';
import { probe, type DatabaseTarget } from '../support/database-probe.js';
import { httpRawDispatch, modernMeta } from '../support/mcp-clients.js';
import { ADMIN, as } from '../support/proxy-identity.js';
import { useProxiedStack } from '../support/proxy-service.js';
import type { ServiceProcess } from '../support/service-process.js';

const MAX_READ = 4096;
const QUOTA = 16 * 1024;
const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const MATH = 'export const add = (a, b) => a + b;\n';

/** The JSON-RPC error a client call was answered with. */
async function rpcError(promise: Promise<unknown>): Promise<{ code: number; message: string; data?: unknown }> {
  try {
    await promise;
  } catch (error) {
    const { code, message, data } = error as { code: number; message: string; data?: unknown };
    return { code, message, data };
  }
  throw new Error('expected a JSON-RPC error');
}

describe('session workspaces and deliverables as MCP resources, two users behind an SSO proxy', () => {
  // The template the service copies into each new session workspace, in the stack's folder.
  const dir = mkdtempSync(join(tmpdir(), 'oam-'));
  const template = join(dir, 'template');
  mkdirSync(join(template, 'docs'), { recursive: true });
  writeFileSync(join(template, 'docs', 'README.md'), 'template readme\n');
  const stack = useProxiedStack({
    dir,
    config: { workspace: { template, max_session_bytes: QUOTA, retention_days: 1 }, mcp: { resources: { max_read_bytes: MAX_READ } } },
  });
  const { ollama } = stack;
  let service: ServiceProcess;
  let db: DatabaseTarget;
  let alice: Client;
  let bob: Client;
  let base: string;
  let bobSession: string;
  let aliceSession: string;

  const toolResults = () => lastToolResults(ollama);
  const sessionDir = (sessionId: string) => join(stack.config.workspace, 'sessions', sessionId);

  beforeAll(() => void ({ service, database: db, base, alice, bob } = stack));

  it("gives each session its own workspace, copied from the template, that nothing of another session's can reach", async () => {
    ollama.enqueue(call('write_file', { path: 'secret.txt', content: 'bob secret\n' }), { content: 'saved' });
    const bobTask = await run(bob, 'keep my secret');
    bobSession = bobTask.session_id;
    const bobDir = sessionDir(bobSession);
    expect(readFileSync(join(bobDir, 'secret.txt'), 'utf8')).toBe('bob secret\n');
    expect(readFileSync(join(bobDir, 'docs', 'README.md'), 'utf8')).toBe('template readme\n');

    // Alice's first Task tries every way the tools offer, and plants links for a later Task.
    ollama.enqueue(
      call('read_file', { path: `../${bobSession}/secret.txt` }),
      call('read_file', { path: join(bobDir, 'secret.txt') }),
      call('run_command', {
        command: `cat ${bobDir}/secret.txt; cat ../${bobSession}/secret.txt; ls ..; ln ${bobDir}/secret.txt hard.txt; ln -s ${bobDir} bobdir; ln -s ../${bobSession} rel; echo planted`,
      }),
      call('write_file', { path: 'src/math.js', content: MATH }),
      { content: 'done' },
    );
    const first = await run(alice, 'look around');
    aliceSession = first.session_id;
    const results = toolResults();
    expect(results[0]).toMatch(/^Error: .*refused, leaves the workspace/);
    expect(results[1]).toMatch(/^Error: .*refused, is absolute/);
    expect(results[2]).toMatch(/^exit code 0\n[\s\S]*planted/);
    expect(results.join('\n')).not.toContain('bob secret');
    expect(existsSync(join(sessionDir(aliceSession), 'hard.txt'))).toBe(false);

    // A later Task of the same session: its files are still there, the planted links lead nowhere.
    ollama.enqueue(
      call('read_file', { path: 'src/math.js' }),
      call('read_file', { path: 'bobdir/secret.txt' }),
      call('read_file', { path: 'rel/secret.txt' }),
      call('write_file', { path: 'bobdir/pwned.txt', content: 'x' }),
      call('list_dir', { path: 'bobdir' }),
      call('grep', { pattern: 'bob secret' }),
      call('run_command', { command: 'cat bobdir/secret.txt rel/secret.txt; echo end' }),
      { content: 'checked' },
    );
    await run(alice, 'again', aliceSession);
    const later = toolResults();
    expect(later[0]).toBe(`1\t${MATH.trimEnd()}\n2\t`);
    expect(later.slice(1, 5).every((output) => /^Error: .*(resolves outside|no such file)/.test(output))).toBe(true);
    expect(later[5]).toBe('no matches');
    expect(later[6]).toBe('exit code 0\nend\n\n[stderr]\ncat: bobdir/secret.txt: No such file or directory\ncat: rel/secret.txt: No such file or directory');
    expect(later.join('\n')).not.toContain('bob secret');
    expect(readdirSync(bobDir).sort()).toEqual(['docs', 'secret.txt']);
    expect(readFileSync(join(bobDir, 'secret.txt'), 'utf8')).toBe('bob secret\n');
  });

  it('lists the deliverables with their URIs after the answer', async () => {
    ollama.enqueue(call('edit_file', { path: 'src/math.js', old_text: 'a + b', new_text: 'b + a' }), { content: 'swapped' });
    const { final, text } = await run(alice, 'swap', aliceSession);
    expect(final.status).toBe('completed');
    expect(text).toMatch(
      new RegExp(
        `result: swapped\n\nFiles created or changed:\n- src/math.js \\(changed, 36 bytes\\) agent-session://${aliceSession}/files/src/math.js\n\ndiff: agent-session://${aliceSession}/tasks/[0-9a-f-]{36}/diff$`,
      ),
    );
  });

  it('writes image inputs into the session workspace where the tools can open them', async () => {
    ollama.capabilities = ['completion', 'tools', 'vision'];
    ollama.enqueue(call('list_dir', { path: '.inputs' }), { content: 'seen' });
    const { task_id } = await run(alice, 'what is this?', aliceSession, { images: [{ mime_type: 'image/png', data_base64: PNG_1x1 }] });
    ollama.capabilities = ['completion', 'tools'];
    expect(readFileSync(join(sessionDir(aliceSession), '.inputs', task_id, '1.png'))).toEqual(Buffer.from(PNG_1x1, 'base64'));
    expect(toolResults()[0]).toBe(`${task_id}/`);
  });

  it('serves the owner her deliverables as resources: template, list newest first and paged, text and binary reads up to the limit', async () => {
    const { resourceTemplates } = await alice.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      expect.objectContaining({ uriTemplate: 'agent-session://{session_id}/files/{+path}', name: 'session-file' }),
      expect.objectContaining({ uriTemplate: 'agent-session://{session_id}/tasks/{task_id}/diff', name: 'task-diff', mimeType: 'text/x-diff' }),
    ]);

    const many = Array.from({ length: 101 }, (_, n) => ({ name: 'write_file', arguments: { path: `out/file ${n}.txt`, content: `${n}` } }));
    ollama.enqueue(
      { toolCalls: many },
      call('write_file', { path: 'data.bin', content: '\u0000\u0001binary\u00ff' }),
      call('write_file', { path: 'at-limit.txt', content: 'a'.repeat(MAX_READ) }),
      call('write_file', { path: 'over-limit.txt', content: 'a'.repeat(MAX_READ + 1) }),
      { content: 'written' },
    );
    await run(alice, 'write many files', aliceSession);

    // One page on the wire: 100 and a cursor; the SDK client's listResources() follows it.
    const raw = await httpRawDispatch(service.url, as('alice@example.com'))({ method: 'resources/list', params: { _meta: modernMeta(false) } });
    expect(raw).toMatchObject({ kind: 'result', result: { ttlMs: 0, cacheScope: 'private' } });
    const first = (raw as { result: { resources: { uri: string; name: string }[]; nextCursor?: string } }).result;
    expect(first.resources).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    expect((await alice.listResources()).resources).toHaveLength(105);
    expect(first.resources.slice(0, 3).map((resource) => resource.name)).toEqual(['over-limit.txt', 'at-limit.txt', 'data.bin']);
    expect(first.resources[0]).toEqual({
      uri: `agent-session://${aliceSession}/files/over-limit.txt`,
      name: 'over-limit.txt',
      title: `over-limit.txt (session ${aliceSession.slice(0, 8)})`,
      description: `over-limit.txt in the workspace of session ${aliceSession}`,
      mimeType: 'text/plain',
      size: MAX_READ + 1,
    });
    expect(first.resources[2]).toMatchObject({ mimeType: 'application/octet-stream' });
    expect(first.resources[3].uri).toBe(`agent-session://${aliceSession}/files/out/file%20100.txt`);
    const second = await alice.listResources({ cursor: first.nextCursor });
    expect(second.nextCursor).toBeUndefined();
    const all = [...first.resources, ...second.resources];
    expect(all.map((resource) => resource.name)).toEqual(expect.arrayContaining(['src/math.js', 'out/file 0.txt']));
    expect(all.find((resource) => resource.name === 'src/math.js')).toEqual({
      uri: `agent-session://${aliceSession}/files/src/math.js`,
      name: 'src/math.js',
      title: `src/math.js (session ${aliceSession.slice(0, 8)})`,
      description: `src/math.js in the workspace of session ${aliceSession}`,
      mimeType: 'text/javascript',
      size: 36,
    });
    expect(all.some((resource) => resource.uri.includes(bobSession))).toBe(false);
    expect((await bob.listResources()).resources.map((resource) => resource.name)).toEqual(['secret.txt']);

    const text = await alice.readResource({ uri: `agent-session://${aliceSession}/files/src/math.js` });
    expect(text.contents).toEqual([{ uri: `agent-session://${aliceSession}/files/src/math.js`, mimeType: 'text/javascript', text: 'export const add = (a, b) => b + a;\n' }]);
    const binary = await alice.readResource({ uri: `agent-session://${aliceSession}/files/data.bin` });
    expect(Buffer.from((binary.contents[0] as { blob: string }).blob, 'base64')).toEqual(Buffer.from('\u0000\u0001binary\u00ff', 'utf8'));
    expect((await alice.readResource({ uri: `agent-session://${aliceSession}/files/at-limit.txt` })).contents[0]).toMatchObject({ text: 'a'.repeat(MAX_READ) });
    const over = await rpcError(alice.readResource({ uri: `agent-session://${aliceSession}/files/over-limit.txt` }));
    expect(over.code).toBe(-32602);
    expect(over.message).toMatch(/4097 bytes, more than the 4096 bytes .*mcp\.resources\.max_read_bytes/);

    const [event] = await probe<{ detail: string; session_id: string }>(
      db,
      "SELECT detail, session_id FROM audit_events WHERE action = 'resources/read' AND outcome = 'ok' ORDER BY seq DESC LIMIT 1",
    );
    expect(JSON.parse(event.detail)).toEqual({ uri: `agent-session://${aliceSession}/files/at-limit.txt`, size: MAX_READ, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(event.session_id).toBe(aliceSession);
  });

  it("answers another user's URI, a made-up one and a path outside the session with the same not-found error", async () => {
    const made = '00000000-0000-4000-8000-000000000000';
    const uris = [
      `agent-session://${aliceSession}/files/src/math.js`,
      `agent-session://${made}/files/src/math.js`,
      `agent-session://${bobSession}/files/no-such-file.txt`,
      `agent-session://${bobSession}/files/../${aliceSession}/files/src/math.js`,
      `agent-session://${bobSession}/files/%2E%2E/${aliceSession}/src/math.js`,
    ];
    for (const uri of uris) {
      expect(await rpcError(bob.readResource({ uri }))).toEqual({ code: -32602, message: `Resource not found: ${uri}`, data: { uri } });
    }
    // Alice's own session, through the links she planted: also not found.
    const viaLink = `agent-session://${aliceSession}/files/bobdir/secret.txt`;
    expect(await rpcError(alice.readResource({ uri: viaLink }))).toEqual({ code: -32602, message: `Resource not found: ${viaLink}`, data: { uri: viaLink } });
    const rejected = await probe<{ detail: string; actor: string }>(
      db,
      "SELECT detail, actor FROM audit_events WHERE action = 'resources/read' AND outcome = 'rejected' ORDER BY seq DESC LIMIT 6",
    );
    expect(rejected.reverse().map((event) => [event.actor, JSON.parse(event.detail)])).toEqual([
      ...uris.map((uri) => ['bob@example.com', { uri, reason: 'resource_not_found' }]),
      ['alice@example.com', { uri: viaLink, reason: 'resource_not_found' }],
    ]);
  });

  it('fails a write or a command that would pass the session quota, and the Task goes on', async () => {
    ollama.enqueue(
      call('write_file', { path: 'big.txt', content: 'x'.repeat(QUOTA) }),
      // Each file fits in the room left, both together do not.
      call('run_command', { command: `head -c ${QUOTA / 2} /dev/zero > a.bin; head -c ${QUOTA / 2} /dev/zero > b.bin` }),
      call('write_file', { path: 'small.txt', content: 'tiny' }),
      call('run_command', { command: 'rm -f a.bin b.bin' }),
      // One file larger than the room left is cut at the room (RLIMIT_FSIZE).
      call('run_command', { command: `head -c ${QUOTA} /dev/zero > one.bin; echo exit=$?; rm -f one.bin` }),
      call('write_file', { path: 'small.txt', content: 'tiny' }),
      { content: 'quota seen' },
    );
    const { final, session_id } = await run(bob, 'fill the disk');
    expect(final).toMatchObject({ status: 'completed', result: expect.stringMatching(/^quota seen/) });
    const results = toolResults();
    expect(results[0]).toMatch(
      /^Error: the session workspace would hold \d+ bytes, more than its quota of 16384 bytes \(workspace.max_session_bytes\); delete files to make room$/,
    );
    // The command that went past the quota is taken back (ADR 0025): what it created is gone, so the room is there again.
    expect(results[1]).toMatch(
      /^Error: after this command the session workspace would hold \d+ bytes, more than its quota of 16384 bytes \(workspace.max_session_bytes\); delete files to make room; the 2 files and directories this command created were removed/,
    );
    expect(existsSync(join(sessionDir(session_id), 'a.bin'))).toBe(false);
    expect(results[2]).toBe('Created small.txt (4 bytes)');
    expect(results[3]).toBe('exit code 0');
    expect(results[4]).toMatch(/exit=153/);
    expect(results[5]).toBe('Wrote small.txt (4 bytes)');
    expect(existsSync(join(sessionDir(session_id), 'big.txt'))).toBe(false);
  });

  it('lets an admin list and download the files of any session, audited', async () => {
    const list = (await (await fetch(`${base}/admin/sessions/${aliceSession}/files`, { headers: ADMIN })).json()) as {
      items: { path: string; size: number }[];
      next_cursor: string | null;
    };
    expect(list.items).toHaveLength(100);
    expect(list.next_cursor).toEqual(expect.any(String));
    const download = await fetch(`${base}/admin/sessions/${aliceSession}/files/src/math.js`, { headers: ADMIN });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await download.text()).toBe('export const add = (a, b) => b + a;\n');
    expect((await fetch(`${base}/admin/sessions/${aliceSession}/files/bobdir/secret.txt`, { headers: ADMIN })).status).toBe(404);
    // The console's own view: to another user, alice's session does not exist.
    expect((await fetch(`${base}/admin/sessions/${aliceSession}/files/src/math.js`, { headers: as('bob@example.com') })).status).toBe(404);
    const events = await probe<{ action: string; outcome: string }>(db, "SELECT action, outcome FROM audit_events WHERE action LIKE 'admin.session_file%' ORDER BY seq");
    expect(events.map((event) => `${event.action}:${event.outcome}`)).toEqual([
      'admin.session_files:ok',
      'admin.session_file_download:ok',
      'admin.session_file_download:error',
      'admin.session_file_download:error',
    ]);
  });

  it('removes session workspaces idle past retention_days; the session, its Tasks and a new Task stay usable', async () => {
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    utimesSync(sessionDir(bobSession), twoDaysAgo, twoDaysAgo);
    await service.stop();
    await service.start();
    bob = await stack.mcpClient(as('bob@example.com'));
    expect(existsSync(sessionDir(bobSession))).toBe(false);
    expect(existsSync(sessionDir(aliceSession))).toBe(true);
    const expired = await rpcError(bob.readResource({ uri: `agent-session://${bobSession}/files/secret.txt` }));
    expect(expired).toMatchObject({ code: -32602, message: expect.stringMatching(/expired: its workspace was removed after 1 idle days \(workspace.retention_days\)/) });
    expect((await bob.listResources()).resources.map((resource) => resource.name)).not.toContain('secret.txt');
    ollama.enqueue(call('list_dir', {}), { content: 'fresh' });
    const again = await run(bob, 'start over', bobSession);
    expect(again.final.status).toBe('completed');
    expect(toolResults()[0]).toBe('docs/');
  });
});
