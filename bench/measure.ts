import autocannon from 'autocannon';
import { fieldsOf, MODERN, modernMeta, parseRpc } from '../test/support/mcp-clients.js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export interface Load {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
}

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Closed-loop load with autocannon; a run with errors or non-2xx answers is reported, not hidden. */
export async function load({ url, method = 'POST', headers, body, connections, seconds }: Load): Promise<Figures> {
  const result = await autocannon({ url, method, headers, body, connections, duration: seconds });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

/**
 * Servers on core 0, the load generator (this process) on core 1, as the calibration in the
 * reliability reference did: otherwise the two fight for one core and the ratios mean less.
 */
export function pin(pid: number, core: 0 | 1): void {
  if (availableParallelism() < 2) return;
  try {
    execFileSync('taskset', ['-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
  } catch {
    // taskset missing: run unpinned
  }
}

/** Starts `node <script> <args>` and resolves once it prints `ready` (or, for the service, answers HTTP). */
export async function startProcess(script: string, args: string[], env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready') || output.includes('MCP endpoint')) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}:\n${output}`)));
  });
  pin(child.pid!, 0);
  return child;
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

/** Peak resident memory (kB) of a process since the last reset; `reset` clears the peak (Linux). */
export async function peakRss(pid: number, reset = false): Promise<number> {
  const { readFile, writeFile } = await import('node:fs/promises');
  if (reset) await writeFile(`/proc/${pid}/clear_refs`, '5');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)![1]);
}

/** Resident memory (kB) of a process now (Linux). */
export async function rss(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  return Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]);
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
export const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];

/** The headers of a 2026-07-28 `tools/call` of `name` over /mcp. */
export const headers = (name: string) => ({
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': MODERN,
  'Mcp-Method': 'tools/call',
  'Mcp-Name': name,
});
export const callBody = (name: string, args: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: modernMeta(false) } });

/** One tool call over /mcp; its text. */
export async function call(url: string, name: string, args: unknown): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: headers(name), body: callBody(name, args) });
  const response = parseRpc(await res.text(), res.headers.get('content-type'));
  if (response.kind === 'error') throw new Error(JSON.stringify(response.error));
  return response.result.content[0].text as string;
}

/** Polls agent_status until the Task ends. */
export async function finished(url: string, taskId: string): Promise<void> {
  for (;;) {
    const status = fieldsOf(await call(url, 'agent_status', { task_id: taskId })).status;
    if (['completed', 'failed', 'cancelled'].includes(status)) return;
    await new Promise((done) => setTimeout(done, 5));
  }
}

/** User + system CPU of a live process, in ms, from /proc/<pid>/stat (Linux; its clock ticks are USER_HZ, 100 a second). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
