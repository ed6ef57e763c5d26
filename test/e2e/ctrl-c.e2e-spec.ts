import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { probe } from '../support/database-probe.js';
import { useStack } from '../support/e2e-stack.js';
import { gate } from '../support/gate.js';
import { fieldsOf, modernClient, textOf } from '../support/mcp-clients.js';
import { pollUntil } from '../support/poll.js';
import { freePort } from '../support/service-process.js';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * `npm start` (the README command) in a process group of its own, as a terminal runs it: Ctrl-C there is SIGINT to
 * the whole group, so npm and node both get it, and npm forwards its copy to node.
 */
class NpmStart {
  output = '';
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;

  constructor(configFile: string, port: number) {
    this.child = spawn('npm', ['start'], {
      cwd: ROOT,
      detached: true,
      env: { PATH: process.env.PATH, NO_COLOR: '1', AGENT_CONFIG: configFile, AGENT__SERVER__PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((done) => this.child.once('exit', (code) => done(code)));
  }

  waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<true> {
    return pollUntil(async () => pattern.test(this.output) || undefined, `${pattern}`, { timeoutMs, everyMs: 50, lastSeen: () => this.output });
  }

  /** What a terminal's Ctrl-C does: SIGINT to every process of the foreground group. */
  ctrlC(): void {
    process.kill(-this.child.pid!, 'SIGINT');
  }

  /** Cleanup after a failed test: nothing of the group outlives it. */
  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) process.kill(-this.child.pid!, 'SIGKILL');
  }
}

describe('Ctrl-C on `npm start`', () => {
  const stack = useStack({ service: false, config: { queue: { shutdown_grace_ms: 20_000 } } });
  const { ollama } = stack;
  let started: NpmStart | null = null;

  afterEach(() => started?.kill());

  const start = async () => {
    const port = await freePort();
    started = new NpmStart(stack.config.file, port);
    await started.waitFor(/listening: MCP endpoint/);
    return { npm: started, url: `http://127.0.0.1:${port}/mcp` };
  };

  it('drains once: the running Task finishes, npm exits 0, and the log says why', async () => {
    const { npm, url } = await start();
    const client = await modernClient(url);
    const before = ollama.workChats.length;
    // The answer comes once the test has seen the service begin to drain: a timed delay could race the signal.
    const drained = gate();
    ollama.enqueue({ content: 'finished after Ctrl-C', heldUntil: drained.opened });
    const taskId = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'running when Ctrl-C comes' } }))).task_id;
    await ollama.waitForChats(before + 1);
    npm.ctrlC();
    try {
      await npm.waitFor(/SIGINT: shutting down/, 10_000);
    } finally {
      drained.open();
    }
    expect(await npm.exited).toBe(0);
    // Node sees the terminal's SIGINT and npm's forwarded copy, or one of them when the kernel merges the second into
    // the first while that is still pending; the copy, when seen, is named as the same request and forces nothing
    // (test/unit/termination.spec.ts drives both cases with its own clock).
    expect(npm.output).not.toMatch(/forced stop/);
    expect(npm.output.match(/SIGINT: shutting down/g)).toHaveLength(1);
    const [row] = await probe<{ status: string; result: string }>(stack.database, 'SELECT status, result FROM tasks WHERE id = ?', taskId);
    expect(row).toEqual({ status: 'completed', result: 'finished after Ctrl-C' });
    await client.close().catch(() => undefined);
  }, 120_000);

  it('forces on a second Ctrl-C a person presses later, and says so', async () => {
    const { npm, url } = await start();
    const client = await modernClient(url);
    const before = ollama.workChats.length;
    ollama.enqueue({ hang: true });
    const taskId = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'never ends' } }))).task_id;
    await ollama.waitForChats(before + 1);
    npm.ctrlC();
    await npm.waitFor(/SIGINT: shutting down/, 10_000);
    // A person's second press: after the window in which a repeat is npm's copy (SAME_STOP_MS, 1 s).
    await new Promise((done) => setTimeout(done, 1500));
    npm.ctrlC();
    expect(await npm.exited).toBe(1);
    expect(npm.output).toMatch(/SIGINT again: forced stop/);
    const [row] = await probe<{ status: string }>(stack.database, 'SELECT status FROM tasks WHERE id = ?', taskId);
    expect(row.status).not.toBe('completed');
    await client.close().catch(() => undefined);
  }, 120_000);
});
