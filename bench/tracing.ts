/**
 * `npm run bench:tracing` (issue 39): what tracing costs, on against off, measured in the same run on the same
 * machine (ratios; absolute numbers on this shared machine mean little). Two services on one scripted Ollama,
 * alike but for `telemetry.otlp_endpoint` (a sink in this process that answers OTLP/HTTP and keeps nothing),
 * measured in turn: agent_status throughput (autocannon, 8 connections) and the wall time of a Task (agent_run,
 * one model call and one tool call, polled to its end, one at a time). Wall times on a shared machine swing with
 * its load; the service's own CPU time per request and per Task (utime + stime from /proc) is the steadier figure.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fieldsOf } from '../test/support/mcp-clients.js';
import { ScriptedOllama } from '../test/support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../test/support/service-process.js';
import { call, callBody, cpuMs, finished, headers, load, median, percentile, pin, type Figures } from './measure.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const TASKS = Number(process.env.BENCH_TASKS ?? 30);

/** An OTLP/HTTP endpoint that drains each export and answers 200, counting the requests. */
async function sink() {
  let exports = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports: () => exports, close: () => server.close() };
}

async function startService(ollama: ScriptedOllama, otlpEndpoint: string): Promise<ServiceProcess> {
  const service = await new ServiceProcess((await writeConfig(ollama.url, { telemetry: { otlp_endpoint: otlpEndpoint } })).file).start();
  pin(service.pid!, 0);
  return service;
}

/** Wall times of `count` Tasks run one after another (each: a tool call, then the answer). */
async function taskTimes(ollama: ScriptedOllama, url: string, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let n = 0; n < count; n++) {
    ollama.enqueue({ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }], promptEvalCount: 10, evalCount: 5 }, { content: 'done', promptEvalCount: 10, evalCount: 5 });
    const started = performance.now();
    const taskId = fieldsOf(await call(url, 'agent_run', { request: `task ${n}` })).task_id;
    await finished(url, taskId);
    times.push(performance.now() - started);
  }
  return times;
}

async function main() {
  const ollama = await new ScriptedOllama().start();
  const collector = await sink();
  const services = { off: await startService(ollama, ''), on: await startService(ollama, collector.url) };
  const status: Record<'off' | 'on', Figures[]> = { off: [], on: [] };
  const tasks: Record<'off' | 'on', number[]> = { off: [], on: [] };
  /** The service's CPU per agent_status request and per Task, by round. */
  const cpu = { status: { off: [] as number[], on: [] as number[] }, task: { off: [] as number[], on: [] as number[] } };
  for (const mode of ['off', 'on'] as const) await taskTimes(ollama, services[mode].url, 3); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    // Each round swaps the order, so neither mode always runs on a warmer (or busier) machine.
    for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      const url = services[mode].url;
      const taskId = fieldsOf(await call(url, 'agent_run', { request: 'status fixture' })).task_id;
      await finished(url, taskId);
      const pid = services[mode].pid!;
      let before = cpuMs(pid);
      const figures = await load({ url, headers: headers('agent_status'), body: callBody('agent_status', { task_id: taskId }), connections: 8, seconds: SECONDS });
      status[mode].push(figures);
      cpu.status[mode].push((cpuMs(pid) - before) / (figures.rps * SECONDS));
      before = cpuMs(pid);
      tasks[mode].push(...(await taskTimes(ollama, url, TASKS)));
      cpu.task[mode].push((cpuMs(pid) - before) / TASKS);
    }
  }
  const rps = (mode: 'off' | 'on') => median(status[mode].map((figures) => figures.rps));
  const p99 = (mode: 'off' | 'on') => median(status[mode].map((figures) => figures.p99));
  const errors = [...status.off, ...status.on].reduce((sum, figures) => sum + figures.errors, 0);
  const lines = [
    `tracing on against off, same run, ${ROUNDS} rounds, the order swapped each round (servers pinned to core 0, load on core 1); ${collector.exports()} OTLP exports received`,
    `agent_status, 8 connections, ${SECONDS} s a round: off ${rps('off').toFixed(0)} req/s (p99 ${p99('off')} ms), on ${rps('on').toFixed(0)} req/s (p99 ${p99('on')} ms): ratio on/off ${(rps('on') / rps('off')).toFixed(3)}; errors ${errors}`,
    `service CPU per agent_status: off ${median(cpu.status.off).toFixed(3)} ms, on ${median(cpu.status.on).toFixed(3)} ms: ratio ${(median(cpu.status.on) / median(cpu.status.off)).toFixed(3)}`,
    `service CPU per Task (its accept, run, end and the polls of it): off ${median(cpu.task.off).toFixed(1)} ms, on ${median(cpu.task.on).toFixed(1)} ms: ratio ${(median(cpu.task.on) / median(cpu.task.off)).toFixed(3)}`,
    `a Task (agent_run, a tool call, the answer; polled to its end), ${tasks.off.length} each: median off ${median(tasks.off).toFixed(1)} ms, on ${median(tasks.on).toFixed(1)} ms: ratio ${(median(tasks.on) / median(tasks.off)).toFixed(3)}; p95 off ${percentile(tasks.off, 95).toFixed(1)} ms, on ${percentile(tasks.on, 95).toFixed(1)} ms`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  await services.off.stop();
  await services.on.stop();
  collector.close();
  await ollama.stop();
}

await main();
