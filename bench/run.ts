/**
 * `npm run bench`: gateway figures as ratios against baselines measured in the same run (this
 * machine is shared and noisy, so absolute numbers mean little; see docs/benchmarks.md).
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { freePort, ServiceProcess, writeConfig } from '../test/support/service-process.js';
import { fieldsOf } from '../test/support/mcp-clients.js';
import { ScriptedOllama } from '../test/support/scripted-ollama.js';
import { DataSource } from 'typeorm';
import { AuditLogService } from '../src/audit/audit-log.service.js';
import { AuditWriter } from '../src/audit/audit-writer.js';
import { AuditService } from '../src/audit/audit.service.js';
import { AuditRepository } from '../src/audit/audit.repository.js';
import { AuditEventEntity } from '../src/audit/audit-event.entity.js';
import { PlainSql } from '../src/database/plain-sql.js';
import { UnitOfWork } from '../src/database/unit-of-work.js';
import { validateConfig } from '../src/config/agent-config.js';
import { dataSourceOptions } from '../src/database/data-source-options.js';
import { Metrics } from '../src/metrics/metrics.js';
import { freshDatabase } from '../test/support/databases.js';
import { call, callBody, finished, headers, load, median, peakRss, percentile, pin, startProcess, stopProcess, type Figures, type Load } from './measure.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WARM_UP_SECONDS = 3;
const MiB = 1024 * 1024;

const row = (name: string, figures: Figures) => `| ${name} | ${figures.rps.toFixed(0)} | ${figures.p50} | ${figures.p99} | ${figures.errors} |`;

async function gatewayThroughput(ollama: ScriptedOllama, floorUrl: string) {
  const helloPort = await freePort();
  const hello = await startProcess('dist-tools/bench/hello-server.js', [String(helloPort)]);
  const service = await startService(ollama);
  const taskId = fieldsOf(await call(service.url, 'agent_run', { request: 'benchmark fixture' })).task_id;
  await finished(service.url, taskId);
  const statusLoad = { headers: headers('agent_status'), body: callBody('agent_status', { task_id: taskId }), connections: 32 };
  const runs: Record<'floor' | 'hello' | 'ours', Figures[]> = { floor: [], hello: [], ours: [] };
  for (let round = 0; round < ROUNDS; round++) {
    runs.floor.push(await load({ url: `${floorUrl}/mcp`, ...statusLoad, seconds: SECONDS }));
    runs.hello.push(await load({ url: `http://127.0.0.1:${helloPort}/hello`, method: 'GET', connections: 32, seconds: SECONDS }));
    runs.ours.push(await load({ url: service.url, ...statusLoad, seconds: SECONDS }));
  }
  const best = (figures: Figures[]) => figures.reduce((a, b) => (b.rps > a.rps ? b : a));
  await service.stop();
  await stopProcess(hello);
  return { floor: best(runs.floor), hello: best(runs.hello), ours: best(runs.ours) };
}

/**
 * `load` after WARM_UP_SECONDS of the same load, unmeasured: a freshly started service spends its first
 * seconds compiling (500 accepts/s in its first second, 1 900 from its fourth on).
 */
async function loadWarm(spec: Omit<Load, 'seconds'>): Promise<Figures> {
  await load({ ...spec, seconds: WARM_UP_SECONDS });
  return load({ ...spec, seconds: SECONDS });
}

/** Puts the worker on a Task whose model call never ends, as if it were waiting on a real model. */
async function occupyWorker(ollama: ScriptedOllama, url: string): Promise<void> {
  ollama.enqueue({ hang: true });
  await call(url, 'agent_run', { request: 'occupies the worker' });
}

/**
 * agent_run accept latency: the worker is kept on a Task whose model call never ends, as it would be
 * waiting on a real model, so the figure is the accept path (validate, store, audit, answer) and not the
 * scripted model's instant answers competing for the event loop.
 */
async function acceptLatency(ollama: ScriptedOllama, floorUrl: string) {
  const service = await startService(ollama, { queue: { shutdown_grace_ms: 0 } });
  await occupyWorker(ollama, service.url);
  // The floor it is compared with has served for minutes by now.
  const accept = await loadWarm({ url: service.url, headers: headers('agent_run'), body: callBody('agent_run', { request: 'accept latency' }), connections: 16 });
  await service.stop();
  // The same concurrency against the protocol floor's trivial in-memory tool: the latency no MCP server on the SDK goes below here.
  const floor = await load({
    url: `${floorUrl}/mcp`,
    headers: headers('agent_status'),
    body: callBody('agent_status', { task_id: randomUUID() }),
    connections: 16,
    seconds: SECONDS,
  });
  return { accept, floor };
}

/**
 * Accept latency of the three surfaces in one service, by one client: agent_run over /mcp (its whole
 * answer), A2A SendMessage with returnImmediately (the submitted Task), and a streamed Chat API request
 * up to its first chunk (the accepted Task's agent object; the stream is then dropped, the Task stays
 * queued). The worker is occupied, so every request is the accept path alone.
 */
async function surfaceAcceptLatency(ollama: ScriptedOllama) {
  const service = await startService(ollama, { queue: { shutdown_grace_ms: 0 } });
  await occupyWorker(ollama, service.url);
  const base = `http://127.0.0.1:${service.port}`;
  const json = { 'Content-Type': 'application/json' };
  const a2aBody = () =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'accept latency' }] }, configuration: { returnImmediately: true } },
    });
  const chatBody = JSON.stringify({ model: 'ollama-agent', stream: true, messages: [{ role: 'user', content: 'accept latency' }] });
  const surfaces: Record<'mcp' | 'a2a' | 'chat', () => Promise<void>> = {
    mcp: async () => void (await (await fetch(service.url, { method: 'POST', headers: headers('agent_run'), body: callBody('agent_run', { request: 'accept latency' }) })).text()),
    a2a: async () => void (await (await fetch(`${base}/a2a`, { method: 'POST', headers: { ...json, 'A2A-Version': '1.0' }, body: a2aBody() })).text()),
    chat: async () => {
      const reader = (await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: json, body: chatBody })).body!.getReader();
      await reader.read();
      await reader.cancel();
    },
  };
  const timed = async (request: () => Promise<void>, total: number, concurrency = 16) => {
    const times: number[] = [];
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (times.length < total) {
          const started = performance.now();
          await request();
          times.push(performance.now() - started);
        }
      }),
    );
    return { p50: median(times), p99: percentile(times, 99) };
  };
  const results: Record<string, { p50: number; p99: number }[]> = { mcp: [], a2a: [], chat: [] };
  for (const request of Object.values(surfaces)) await timed(request, 300); // warm-up, unmeasured
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, request] of Object.entries(surfaces)) results[name].push(await timed(request, 1500));
  }
  await service.stop();
  const best = (figures: { p50: number; p99: number }[]) => figures.reduce((a, b) => (b.p50 < a.p50 ? b : a));
  return { mcp: best(results.mcp), a2a: best(results.a2a), chat: best(results.chat) };
}

async function dispatchLatency(ollama: ScriptedOllama) {
  const config = await writeConfig(ollama.url, { queue: { poll_interval_ms: 1000 } });
  const service = await new ServiceProcess(config.file).start();
  pin(service.pid!, 0);
  const ids: string[] = [];
  for (let n = 0; n < 30; n++) {
    const taskId = fieldsOf(await call(service.url, 'agent_run', { request: `dispatch ${n}` })).task_id;
    await finished(service.url, taskId);
    ids.push(taskId);
  }
  await service.stop();
  const db = new Database((config.database as { path: string }).path, { readonly: true });
  const rows = db.prepare('SELECT created_at, started_at FROM tasks').all() as { created_at: string; started_at: string }[];
  db.close();
  return rows.map((task) => Date.parse(task.started_at) - Date.parse(task.created_at));
}

async function largeImages(ollama: ScriptedOllama, floorUrl: string) {
  ollama.capabilities = ['completion', 'tools', 'vision'];
  const service = await startService(ollama, { queue: { shutdown_grace_ms: 0 } });
  const image = () => ({ mime_type: 'image/png', data_base64: Buffer.alloc(10 * MiB, randomUUID()).toString('base64') });
  await call(service.url, 'agent_run', { request: 'warm up', images: [{ mime_type: 'image/png', data_base64: 'iVBORw0KGgo=' }] });
  // The figure is the accept path alone (parse, validate, hash, persist), not the worker's Ollama calls.
  await occupyWorker(ollama, service.url);
  // Encoded once: the figure is the server's, not the client re-encoding 27 MiB of text on every request.
  const body = Buffer.from(callBody('agent_run', { request: 'what is in these images?', images: [image(), image()] }));
  const timings: number[] = [];
  const growth: number[] = [];
  for (let n = 0; n < 3; n++) {
    const before = await peakRss(service.pid!, true);
    const started = performance.now();
    const res = await fetch(service.url, { method: 'POST', headers: headers('agent_run'), body });
    const text = await res.text();
    timings.push(performance.now() - started);
    if (!text.includes('status: queued')) throw new Error(`20 MiB request not accepted: ${text.slice(0, 300)}`);
    growth.push(((await peakRss(service.pid!)) - before) * 1024);
    await new Promise((done) => setTimeout(done, 1500));
  }
  await service.stop();
  ollama.capabilities = ['completion', 'tools'];
  // References for the same body: a bare node:http server that only reads it (the transfer alone), and
  // the protocol floor, which reads and parses it through the SDK and answers that it has no such tool.
  const timed = async (url: string) => {
    const times: number[] = [];
    for (let n = 0; n < 3; n++) {
      const started = performance.now();
      await (await fetch(url, { method: 'POST', headers: headers('agent_run'), body })).text();
      times.push(performance.now() - started);
    }
    return median(times);
  };
  return { ms: median(timings), transferMs: await timed(`${floorUrl}/sink`), floorMs: await timed(`${floorUrl}/mcp`), rssGrowth: median(growth), payload: 20 * MiB };
}

async function statusAtScale(ollama: ScriptedOllama, stored: number) {
  const config = await writeConfig(ollama.url);
  let service = await new ServiceProcess(config.file).start();
  await service.stop();
  const db = new Database((config.database as { path: string }).path);
  const at = new Date().toISOString();
  const session = randomUUID();
  db.prepare('INSERT INTO sessions (id, owner, created_at) VALUES (?, ?, ?)').run(session, 'local', at);
  const insert = db.prepare("INSERT INTO tasks (id, session_id, owner, request, status, result, created_at, updated_at) VALUES (?, ?, 'local', 'bulk', 'completed', 'done', ?, ?)");
  const ids: string[] = [];
  db.transaction(() => {
    for (let n = 0; n < stored; n++) {
      const id = randomUUID();
      ids.push(id);
      insert.run(id, session, at, at);
    }
  })();
  db.close();
  service = await new ServiceProcess(config.file).start();
  pin(service.pid!, 0);
  const target = ids[Math.floor(stored / 2)];
  // Both sides start cold; warming each up first keeps the compiler's start-up out of the ratio.
  const figures = await loadWarm({ url: service.url, headers: headers('agent_status'), body: callBody('agent_status', { task_id: target }), connections: 32 });
  await service.stop();
  return figures;
}

/** T4.2: verification of a chain of 100 000 events, timed alone (the events are written first). */
async function auditVerify(events: number): Promise<{ seconds: number; longestStallMs: number }> {
  const config = validateConfig({ database: await freshDatabase('sqlite') });
  // A DataSource built by hand names the entities it hydrates (the service's modules register their own).
  const source = new DataSource(dataSourceOptions(config.database, [AuditEventEntity]));
  await source.initialize();
  const sql = new PlainSql(source);
  const repository = new AuditRepository(sql);
  const audit = new AuditService(new AuditWriter(new UnitOfWork(sql), repository, config, new Metrics()), config);
  const caller = { user: 'bench', groups: [], admin: false, transport: 'http' as const, address: '127.0.0.1', client: null };
  for (let written = 0; written < events; written += 5000) {
    await Promise.all(Array.from({ length: 5000 }, (_, n) => audit.record({ caller, action: 'bench.event', outcome: 'ok', detail: { n } })));
  }
  // What the other requests of a live service feel meanwhile: the longest the walk holds the event loop.
  const longestStall = watchEventLoop();
  const started = performance.now();
  const result = await new AuditLogService(repository).verify();
  const seconds = (performance.now() - started) / 1000;
  const longestStallMs = longestStall();
  await source.destroy();
  if (!result.ok || result.checked !== events) throw new Error(`verify failed: ${JSON.stringify(result)}`);
  return { seconds, longestStallMs };
}

/** Starts timing the gaps between event-loop turns; the returned function stops and gives the longest (ms). */
function watchEventLoop(): () => number {
  let last = performance.now();
  let longest = 0;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  };
  const timer = setInterval(tick, 1);
  return () => {
    clearInterval(timer);
    tick();
    return longest;
  };
}

/** The service under test, pinned like the baselines. */
async function startService(ollama: ScriptedOllama, overrides: Record<string, unknown> = {}): Promise<ServiceProcess> {
  const service = await new ServiceProcess((await writeConfig(ollama.url, overrides)).file).start();
  pin(service.pid!, 0);
  return service;
}

/**
 * Issue 23: from the model's first content chunk (the scripted Ollama writing it, in this process) to
 * the Chat API client's first content delta (this process reading it), for a no-tool answer, one Task
 * at a time. Goal: under 50 ms.
 */
async function firstDeltaLatency(ollama: ScriptedOllama, rounds = 20): Promise<number[]> {
  const service = await startService(ollama);
  const base = `http://127.0.0.1:${service.port}`;
  const latencies: number[] = [];
  for (let round = 0; round < rounds + 2; round++) {
    ollama.enqueue({ chunks: ['The', ' first', ' words', ' of', ' it'], chunkDelayMs: 20, promptEvalCount: 1, evalCount: 5 });
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'ollama-agent', stream: true, messages: [{ role: 'user', content: `latency ${round}` }] }),
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let at: number | null = null;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (at === null && /"content":"[^"]/.test(text)) at = performance.now();
    }
    // The first two rounds warm the service up (JIT, prepared statements) and are not counted.
    if (round >= 2 && at !== null) latencies.push(at - ollama.firstContentAt.at(-1)!);
  }
  await service.stop();
  return latencies;
}

async function main() {
  pin(process.pid, 1);
  if (process.env.BENCH_ONLY === 'first-delta') {
    const ollama = await new ScriptedOllama().start();
    const latencies = await firstDeltaLatency(ollama);
    await ollama.stop();
    const ms = (value: number) => value.toFixed(1);
    process.stdout.write(
      `Chat API first content delta after the model's first chunk (no tools, ${latencies.length} Tasks): median ${ms(median(latencies))} ms, p95 ${ms(percentile(latencies, 95))} ms, max ${ms(Math.max(...latencies))} ms (target < 50)\n`,
    );
    return;
  }
  const ollama = await new ScriptedOllama().start();
  ollama.setFallback({ content: 'ok', promptEvalCount: 1, evalCount: 1 });
  const floorPort = await freePort();
  const floorServer = await startProcess('dist-tools/bench/floor-server.js', [String(floorPort)]);
  const floorUrl = `http://127.0.0.1:${floorPort}`;
  const gateway = await gatewayThroughput(ollama, floorUrl);
  const { accept, floor: floorAt16 } = await acceptLatency(ollama, floorUrl);
  const surfaces = await surfaceAcceptLatency(ollama);
  const dispatch = await dispatchLatency(ollama);
  const firstDelta = await firstDeltaLatency(ollama);
  const images = await largeImages(ollama, floorUrl);
  await stopProcess(floorServer);
  const small = await statusAtScale(ollama, 100);
  const large = await statusAtScale(ollama, 100_000);
  await ollama.stop();
  const verify = await auditVerify(100_000);

  const lines = [
    `Node ${process.version}, ${SECONDS}s per run, best of ${ROUNDS} interleaved rounds; servers pinned to core 0, autocannon (this process) to core 1.`,
    '',
    '| agent_status over HTTP, 32 connections | req/s | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    row('(a) SDK v2 stateless handler on node:http, in-memory tool (protocol floor)', gateway.floor),
    row('(b) NestJS + Express JSON hello-world', gateway.hello),
    row('ollama-agent-mcp agent_status (Nest, identity, validation, database, audit)', gateway.ours),
    '',
    `ratio to (a): ${(gateway.ours.rps / gateway.floor.rps).toFixed(2)} (target >= 0.9); ratio to (b): ${(gateway.ours.rps / gateway.hello.rps).toFixed(2)}; p99 ${gateway.ours.p99} ms (target < 75)`,
    `agent_run accept at 16 connections: p50 ${accept.p50} ms, p99 ${accept.p99} ms (target p99 < 20), ${accept.rps.toFixed(0)} req/s, errors ${accept.errors}; (a) at 16 connections: p50 ${floorAt16.p50} ms, p99 ${floorAt16.p99} ms, ${floorAt16.rps.toFixed(0)} req/s`,
    `accept by surface, 16 concurrent, same run: agent_run over /mcp p50 ${surfaces.mcp.p50.toFixed(1)} ms (p99 ${surfaces.mcp.p99.toFixed(1)}); A2A SendMessage (returnImmediately) p50 ${surfaces.a2a.p50.toFixed(1)} ms (p99 ${surfaces.a2a.p99.toFixed(1)}), ratio ${(surfaces.a2a.p50 / surfaces.mcp.p50).toFixed(2)}; Chat API first SSE chunk p50 ${surfaces.chat.p50.toFixed(1)} ms (p99 ${surfaces.chat.p99.toFixed(1)}), ratio ${(surfaces.chat.p50 / surfaces.mcp.p50).toFixed(2)}`,
    `dispatch enqueue -> planning on an idle queue: median ${median(dispatch)} ms, p95 ${percentile(dispatch, 95)} ms (target median < 20)`,
    `Chat API first content delta after the model's first chunk (no tools): median ${median(firstDelta).toFixed(1)} ms, p95 ${percentile(firstDelta, 95).toFixed(1)} ms (target < 50)`,
    `one agent_run with 20 MiB of images: ${images.ms.toFixed(0)} ms (target < 250; the same body to a bare node:http reader: ${images.transferMs.toFixed(0)} ms, to (a): ${images.floorMs.toFixed(0)} ms), peak RSS growth ${(images.rssGrowth / images.payload).toFixed(2)}x the payload (target <= 6)`,
    `agent_status with 100 000 Tasks stored vs 100: p50 ${large.p50} vs ${small.p50} ms, req/s ratio ${(small.rps / large.rps).toFixed(2)} (target <= 1.2)`,
    `audit chain verification of 100 000 events: ${verify.seconds.toFixed(2)} s (target < 5), longest event-loop stall meanwhile ${verify.longestStallMs.toFixed(0)} ms`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
