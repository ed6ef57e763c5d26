import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { userInfo } from 'node:os';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { pollUntil } from '../support/poll.js';
import { CLIENT_INFO, fieldsOf, MODERN, modernMeta, stdioRawDispatch, tasksSession, textOf, waitForTerminal } from '../support/mcp-clients.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('MCP over stdio (node dist/stdio.js)', () => {
  // Each test starts the stdio service itself, on the stack's Ollama and config.
  const stack = useStack({ service: false });
  // The same with a small line limit (mcp.images), for the test of a line past it.
  const small = useStack({ service: false, config: { mcp: { images: { max_total_bytes: 3000, max_bytes_per_image: 3000 } } } });
  const { ollama } = stack;
  const serverParams = () => ({
    command: process.execPath,
    args: ['dist/stdio.js'],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', AGENT_CONFIG: stack.config.file },
    stderr: 'pipe' as const,
  });

  it('serves a pinned 2026-07-28 client: plain agent_run then agent_status to completion', async () => {
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StdioClientTransport(serverParams()));
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    ollama.enqueue({ content: 'stdio answer', promptEvalCount: 5, evalCount: 6 });
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'over stdio' } })));
    const final = await waitForTerminal(async (taskId) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } })), accepted.task_id);
    expect(final).toMatchObject({ status: 'completed', result: 'stdio answer' });
    const [{ owner }] = await probe<{ owner: string }>(stack.database, 'SELECT owner FROM tasks WHERE id = ?', accepted.task_id);
    expect(owner).toBe(userInfo().username);
    await client.close();
  });

  it('serves a Tasks-aware client (ext-tasks over a raw stdio channel) through completion', async () => {
    const transport = new StdioClientTransport(serverParams());
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(transport);
    ollama.enqueue({ content: 'task answer over stdio' });
    const session = tasksSession(client, stdioRawDispatch(transport));
    const exec = (await session.callTool('agent_run', { request: 'as a task' })) as { kind: string; settle(): Promise<{ outcome: unknown }> };
    expect(exec.kind).toBe('task');
    const result = resultFromTaskOutcome((await exec.settle()).outcome as never);
    expect(fieldsOf(textOf(result as { content: unknown }))).toMatchObject({ status: 'completed', result: 'task answer over stdio' });
    await session.close();
    await client.close();
  });

  it('serves a legacy (v1 SDK, initialize) client', async () => {
    const client = new LegacyClient({ name: 'legacy-stdio', version: '1.0.0' });
    await client.connect(new LegacyStdioTransport(serverParams()));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['agent_run', 'agent_status']);
    const result = await client.callTool({ name: 'agent_run', arguments: { request: 'legacy stdio' } });
    expect(fieldsOf(textOf(result as { content: unknown })).status).toBe('queued');
    await client.close();
  });

  it('works through `npm run start:stdio` (the README command), whose npm banner SDK clients skip', async () => {
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StdioClientTransport({ ...serverParams(), command: 'npm', args: ['run', 'start:stdio'] }));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['agent_run', 'agent_status']);
    await client.close();
    // The README command type-checks and builds before it starts (prestart:stdio): a full tsc run, which on a
    // busy two-core machine takes longer than the default 30 s.
  }, 180_000);

  it('writes only JSON-RPC frames to stdout, logs to stderr, and exits when stdin closes', async () => {
    const child = spawn(process.execPath, ['dist/stdio.js'], { cwd: ROOT, env: serverParams().env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const request = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: modernMeta(false) } };
    child.stdin.write(`${JSON.stringify(request)}\n`);
    await pollUntil(async () => stdout.includes('\n') || undefined, 'a first line on stdout', { timeoutMs: 10_000, everyMs: 50 }).catch(() => undefined);
    child.stdin.end();
    expect(await exited).toBe(0);
    const lines = stdout.split('\n').filter((line) => line.length > 0);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(JSON.parse(line)).toHaveProperty('jsonrpc', '2.0');
    expect(JSON.parse(lines[0]).result.capabilities.extensions).toEqual({ 'io.modelcontextprotocol/tasks': {} });
    expect(stderr).toMatch(/Nest/);
  });

  // The line limit itself is tested in-process (test/unit/stdio-line-transport.spec.ts); here, that the built
  // service derives it from mcp.images and answers past it on the real pipe, with a small limit.
  it('answers a line longer than the limit from mcp.images with a JSON-RPC error without ending the session, and still exits on EOF', async () => {
    const child = spawn(process.execPath, ['dist/stdio.js'], { cwd: ROOT, env: { ...serverParams().env, AGENT_CONFIG: small.config.file }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stderr.resume();
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const frames = () =>
      stdout
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as { id: unknown; result?: unknown; error?: { code: number; message: string } });
    const answered = (count: number) =>
      new Promise<ReturnType<typeof frames>>((done) => {
        const check = () => frames().length >= count && (child.stdout.off('data', onData), done(frames()));
        const onData = (chunk: Buffer) => ((stdout += chunk.toString()), check());
        child.stdout.on('data', onData);
        check();
      });
    // 4 000 + 1 MiB is the limit; 1.2 MB in pieces, without a newline until the end.
    for (let n = 0; n < 12; n++) child.stdin.write(`${n === 0 ? '{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"' : ''}${'z'.repeat(100_000)}`);
    child.stdin.write('"}}\n');
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'server/discover', params: { _meta: modernMeta(false) } })}\n`);
    const [tooLong, discover] = await answered(2);
    expect(tooLong).toMatchObject({ id: null, error: { code: -32600, message: expect.stringMatching(/longer than 1052576 bytes/) } });
    expect(discover).toMatchObject({ id: 3, result: { capabilities: expect.anything() } });
    child.stdin.end();
    expect(await exited).toBe(0);
  });
});
