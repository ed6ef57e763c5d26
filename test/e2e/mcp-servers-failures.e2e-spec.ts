import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fieldsOf } from '../support/mcp-clients.js';
import { ADMIN_TOKEN, calls, EVERYTHING, MEMORY, stdio, toolNames, useMcpStack } from '../support/mcp-servers-stack.js';
import { pollUntil } from '../support/poll.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { freePort, ServiceProcess, writeConfig } from '../support/service-process.js';

/**
 * Other MCP servers failing the agent: killed mid-Task, hung, slow, never answering; and what the
 * doctor and /readyz say about them.
 */

describe('failures: a server killed mid-Task, a hung call cancelled, a call past timeout_ms, a server that never answers', () => {
  // Accepts connections and never answers: a hung HTTP server.
  const silent = createNetServer(() => undefined);
  beforeAll(() => new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve)));
  const h = useMcpStack(() => ({
    agent: {
      mcp_servers: {
        hung: { url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`, timeout_ms: 1500 },
        everything: { ...stdio(EVERYTHING, ['stdio']), tools: { allow: ['echo', 'trigger-long-running-operation'] } },
        // The extra argument (ignored by the server) tells its process apart from the other one.
        // timeout_ms also bounds its connect: 3 s lets a loaded machine start a Node server (1 s did not, at load 10).
        slow: { ...stdio(EVERYTHING, ['stdio', 'slow-instance']), timeout_ms: 3000, tools: { allow: ['trigger-long-running-operation'] } },
      },
    },
  }));
  afterAll(() => void silent.close());

  it('a server that never answers is shown down with why, and a Task goes on without it', async () => {
    const { servers } = await h.admin('/admin/mcp-servers');
    // Down, or trying again (with backoff): never connected, and the reason kept.
    const hung = servers.find((server: any) => server.name === 'hung');
    expect(['down', 'connecting']).toContain(hung.state);
    expect(hung.last_error).toMatch(/^cannot connect: .*tim/i);
    h.ollama.enqueue(calls(['everything__echo', { message: 'despite hung' }]), { content: 'ok', promptEvalCount: 10, evalCount: 5 });
    const { text } = await h.run('echo with a hung server around');
    expect(fieldsOf(text).status).toBe('completed');
    // The model is told it is there and why it cannot be used, after the fixed prompt (whose bytes stay the prefix).
    const system = h.ollama.workChats.at(-2)!.body.messages[0].content;
    expect(system).toMatch(/^You are a careful software agent/);
    expect(system).toMatch(/\nThe MCP server "hung" is unavailable: it (did not answer in time|is still connecting)\. Its tools are not offered in this task\.(\n|$)/);
    expect(h.toolResults()[0].content).toBe('Echo: despite hung');
    expect(toolNames(h.ollama.workChats.at(-2)!).filter((name) => name.startsWith('hung__'))).toEqual([]);
  });

  /** Waits until the Task's current step is the MCP call (the call is in flight). */
  async function inFlight(taskId: string, tool: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!fieldsOf(await h.statusText(taskId)).current_task?.startsWith(tool)) {
      if (Date.now() > deadline) throw new Error(`${tool} never started`);
      await new Promise((done) => setTimeout(done, 50));
    }
    await new Promise((done) => setTimeout(done, 200));
  }

  it('a server killed during a call: the call fails clearly, the server is restarted, the next Task works', async () => {
    h.ollama.enqueue(calls(['everything__trigger-long-running-operation', { duration: 20, steps: 20 }]), { content: 'the server died', promptEvalCount: 10, evalCount: 5 });
    const accepted = await h.submit('long work');
    await inFlight(accepted.task_id, 'everything__trigger-long-running-operation');
    const pids = h.serverPids('server-everything').filter((candidate) => !h.serverPids('slow-instance').includes(candidate));
    expect(pids).toHaveLength(1);
    const [pid] = pids;
    process.kill(pid, 'SIGKILL');
    const text = await h.finished(accepted.task_id);
    expect(fieldsOf(text).status).toBe('completed');
    expect(h.toolResults()[0].content).toMatch(/^Error: the MCP server "everything" stopped during the call/);
    const [step] = await h.steps(accepted.task_id);
    expect(step.outcome).toBe('error');

    h.ollama.enqueue(calls(['everything__echo', { message: 'back' }]), { content: 'ok', promptEvalCount: 10, evalCount: 5 });
    const next = await h.run('echo again');
    expect(fieldsOf(next.text).status).toBe('completed');
    expect(h.toolResults()[0].content).toBe('Echo: back');
    expect(h.serverPids('server-everything')).not.toContain(pid);
    expect(h.service.stderr).toMatch(/\[mcp:everything\].*closed the connection/);
    // Its stderr reaches the log under its name.
    expect(h.service.stderr).toMatch(/\[mcp:everything\].*Starting default \(STDIO\) server/);
  });

  it('cancelling the Task cancels a hung call at once, and the server keeps serving', async () => {
    h.ollama.enqueue(calls(['everything__trigger-long-running-operation', { duration: 60, steps: 60 }]));
    const accepted = await h.submit('hang');
    await inFlight(accepted.task_id, 'everything__trigger-long-running-operation');
    const started = Date.now();
    const response = await fetch(`${h.stack.base}/admin/tasks/${accepted.task_id}/cancel`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(response.status).toBe(200);
    expect(fieldsOf(await h.finished(accepted.task_id)).status).toBe('cancelled');
    // Far below the operation's 60 s: the cancel stopped the call (a loaded machine may take seconds to get there).
    expect(Date.now() - started).toBeLessThan(20_000);
    const [step] = await h.steps(accepted.task_id);
    expect(step.outcome).toBe('cancelled');

    h.ollama.enqueue(calls(['everything__echo', { message: 'still here' }]), { content: 'ok', promptEvalCount: 10, evalCount: 5 });
    await h.run('echo after cancel');
    expect(h.toolResults()[0].content).toBe('Echo: still here');
  });

  it('a call that does not answer within timeout_ms is a tool error, not a stuck Task', async () => {
    // Its tools are offered once it is connected (a Task does not wait longer for a server that is still starting).
    await pollUntil(
      async () => ((await h.admin('/admin/mcp-servers')).servers.find((server: any) => server.name === 'slow')?.state === 'connected' ? true : undefined),
      'the slow server connected',
      { everyMs: 100 },
    );
    h.ollama.enqueue(calls(['slow__trigger-long-running-operation', { duration: 30, steps: 30 }]), { content: 'too slow', promptEvalCount: 10, evalCount: 5 });
    const started = Date.now();
    const { taskId, text } = await h.run('slow work');
    expect(fieldsOf(text).status).toBe('completed');
    // Far below the operation's 30 s: the call was cut at timeout_ms (a loaded machine may add seconds).
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(h.toolResults()[0].content).toMatch(/^Error: slow__trigger-long-running-operation did not answer within 3000 ms; the call was cancelled/);
    const [audit] = await h.audit(taskId);
    expect(JSON.parse(audit.detail)).toMatchObject({ server: 'slow', tool: 'trigger-long-running-operation', result: 'timeout' });
  });
});

describe('the doctor and /readyz with MCP servers', () => {
  const ollama = new ScriptedOllama();
  beforeAll(() => ollama.start());
  afterAll(() => ollama.stop());

  it('the doctor lists each server: connected with its tools, or why not; a required one down fails it', async () => {
    const { file } = await writeConfig(ollama.url, {
      agent: {
        mcp_servers: {
          memory: { ...stdio(MEMORY), env: { MEMORY_FILE_PATH: join(mkdtempSync(join(tmpdir(), 'oam-memory-')), 'm.jsonl') } },
          broken: { command: '/nonexistent/server' },
          gone: { url: `http://127.0.0.1:${await freePort()}/mcp`, required: true },
        },
      },
    });
    const result = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, ['dist/doctor.js'], { env: { PATH: process.env.PATH, AGENT_CONFIG: file }, stdio: ['ignore', 'pipe', 'ignore'] });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.on('exit', (code) => resolve({ code, stdout }));
    });
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.find((line) => line.includes('mcp server memory'))).toMatch(/^ok {4}mcp server memory: connected \(2025-11-25\), 9 tools: create_entities, /);
    expect(lines.find((line) => line.includes('mcp server broken'))).toMatch(/^warn {2}mcp server broken: cannot connect: .*ENOENT.* \(optional: the agent runs without it\)$/);
    expect(lines.find((line) => line.includes('mcp server gone'))).toMatch(/^fail {2}mcp server gone: cannot connect: /);
    expect(result.code).toBe(1);
  }, 60_000);

  it('/readyz stays ready with an optional server down, and is not ready while a required one is', async () => {
    for (const required of [false, true]) {
      const { file } = await writeConfig(ollama.url, { agent: { mcp_servers: { gone: { url: `http://127.0.0.1:${await freePort()}/mcp`, required } } } });
      const service = await new ServiceProcess(file).start();
      const response = await fetch(service.url.replace(/\/mcp$/, '/readyz'));
      const body = (await response.json()) as { status: string; checks: Record<string, string> };
      await service.stop();
      expect(response.status).toBe(required ? 503 : 200);
      expect(body.checks).toMatchObject({ database: 'ok', ollama: 'ok' });
      // The MCP check is there only for a required server.
      expect(body.checks.mcp_servers).toBe(required ? 'unavailable' : undefined);
    }
  }, 60_000);
});
