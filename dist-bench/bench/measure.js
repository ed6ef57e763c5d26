import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
/** Closed-loop load with autocannon; a run with errors or non-2xx answers is reported, not hidden. */
export async function load({ url, method = 'POST', headers, body, connections, seconds }) {
    const result = await autocannon({ url, method, headers, body, connections, duration: seconds });
    return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx };
}
/**
 * Servers on core 0, the load generator (this process) on core 1, as the calibration in the
 * reliability reference did: otherwise the two fight for one core and the ratios mean less.
 */
export function pin(pid, core) {
    if (availableParallelism() < 2)
        return;
    try {
        execFileSync('taskset', ['-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
    }
    catch {
        // taskset missing: run unpinned
    }
}
/** Starts `node <script> <args>` and resolves once it prints `ready` (or, for the service, answers HTTP). */
export async function startProcess(script, args, env = {}) {
    const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    await new Promise((resolve, reject) => {
        const onData = (chunk) => {
            output += chunk.toString();
            if (output.includes('ready') || output.includes('MCP endpoint'))
                resolve();
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        child.once('exit', (code) => reject(new Error(`${script} exited with ${code}:\n${output}`)));
    });
    pin(child.pid, 0);
    return child;
}
export async function stopProcess(child) {
    if (child.exitCode !== null)
        return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
}
/** Peak resident memory (kB) of a process since the last reset; `reset` clears the peak (Linux). */
export async function peakRss(pid, reset = false) {
    const { readFile, writeFile } = await import('node:fs/promises');
    if (reset)
        await writeFile(`/proc/${pid}/clear_refs`, '5');
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+)/.exec(status)[1]);
}
export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
export const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];
