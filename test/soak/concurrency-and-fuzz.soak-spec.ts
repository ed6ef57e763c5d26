import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { count, probe } from '../support/database-probe.js';
import { MODERN, modernMeta } from '../support/mcp-clients.js';
import { prng } from '../support/prng.js';
import { firstReply, head, openUpload } from '../support/raw-http.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { ServiceProcess, writeConfig } from '../support/service-process.js';

const FUZZ_REQUESTS = Number(process.env.OAM_FUZZ_REQUESTS ?? 10_000);
const SURFACE_FUZZ_REQUESTS = Number(process.env.OAM_SURFACE_FUZZ_REQUESTS ?? 4000);

/**
 * Malformed and half-valid calls to the Chat API and A2A: bodies, messages, parts, methods, versions.
 * Anything the service accepts is a stream or an immediate answer (stream: true, returnImmediately),
 * so no call waits for a Task; a streamed answer is read to its first event and dropped (the Task
 * runs on). Returns what went wrong (any 5xx, any answer that is not JSON or SSE) and the tallies.
 */
async function fuzzChatAndA2a(base: string, requests: number, random: () => number) {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
  const junk = (): unknown =>
    pick<() => unknown>([
      () => null,
      () => random() * 1e6 - 5e5,
      () => '',
      () => 'x'.repeat(Math.floor(random() * 3000)),
      () => crypto.randomUUID(),
      () => '\u0000\u202e\ud800',
      () => [junk()],
      () => ({ nested: [junk()] }),
      () => true,
      () => 'data:image/png;base64,AAAA',
      () => 'ollama-agent',
    ])();
  const chatMessage = () =>
    pick<() => unknown>([
      () => ({ role: pick(['user', 'assistant', 'system', 'tool', junk()]), content: pick([junk(), 'hello']) }),
      () => ({
        role: 'user',
        content: [{ type: pick(['text', 'image_url', junk()]), text: junk(), image_url: pick([{ url: junk() }, junk(), { url: 'data:image/png;base64,iVBORw0KGgo=' }]) }],
      }),
      junk,
    ])();
  const chatBody = () => ({
    model: pick(['ollama-agent', 'ollama-agent', junk()]),
    messages: pick([[chatMessage()], [chatMessage(), chatMessage(), { role: 'user', content: 'go' }], junk()]),
    temperature: pick([undefined, 0.5, junk()]),
    session_id: pick([undefined, null, junk()]),
    // Never absent or false: a call the service accepts streams at once instead of waiting for its Task.
    stream: pick([true, true, 'yes', 1, {}]),
  });
  const part = () =>
    pick<() => unknown>([
      () => ({ text: junk() }),
      () => ({ text: 'hello' }),
      () => ({ raw: pick([junk(), 'iVBORw0KGgo=']), mediaType: pick(['image/png', 'image/gif', junk()]) }),
      () => ({ url: junk(), mediaType: 'image/png' }),
      () => ({ kind: 'text', text: junk() }),
      junk,
    ])();
  const a2aBody = () => {
    const method = pick(['SendMessage', 'SendStreamingMessage', 'GetTask', 'ListTasks', 'CancelTask', 'SubscribeToTask', 'message/send', 'tasks/get', 'tasks/cancel', junk()]);
    const message = {
      messageId: pick([crypto.randomUUID(), junk()]),
      role: pick(['ROLE_USER', 'user', junk()]),
      parts: pick([[part()], [part(), part()], junk()]),
      contextId: pick([undefined, junk()]),
      taskId: pick([undefined, undefined, junk()]),
    };
    const params = pick([
      () => ({ message, configuration: { returnImmediately: true } }),
      () => ({ id: pick([crypto.randomUUID(), junk()]) }),
      () => ({ pageSize: junk(), pageToken: junk(), contextId: junk(), status: junk() }),
      junk,
    ])();
    return { jsonrpc: pick(['2.0', '2.0', junk()]), id: pick([1, 'x', null, junk()]), method, params };
  };
  const requestFor = (): { url: string; init: RequestInit } => {
    const surface = pick(['chat', 'chat', 'a2a', 'a2a', 'cancel', 'raw']);
    const json = { 'Content-Type': 'application/json' };
    if (surface === 'chat') return { url: `${base}/v1/chat/completions`, init: { method: 'POST', headers: json, body: JSON.stringify(chatBody()) } };
    if (surface === 'cancel') return { url: `${base}/v1/chat/completions/${encodeURIComponent(String(junk()).slice(0, 80).toWellFormed())}/cancel`, init: { method: 'POST' } };
    const version = pick([undefined, '1.0', '0.3', String(junk()).slice(0, 20)]);
    const headers = { ...json, ...(version !== undefined && /^[\x20-\x7e]*$/.test(version) ? { 'A2A-Version': version } : {}) };
    if (surface === 'a2a') return { url: `${base}/a2a`, init: { method: 'POST', headers, body: JSON.stringify(a2aBody()) } };
    const body = pick(['{', '[]', 'null', 'x'.repeat(1000), '['.repeat(200), JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage' })]);
    return { url: `${base}${pick(['/a2a', '/v1/chat/completions'])}`, init: { method: 'POST', headers, body } };
  };

  const failures: string[] = [];
  const tally = { clientErrors: 0, jsonAnswers: 0, streams: 0 };
  for (let batch = 0; batch < requests / 50; batch++) {
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        const { url, init } = requestFor();
        const res = await fetch(url, init);
        const what = `${res.status} ${url} ${(typeof init.body === 'string' ? init.body : '').slice(0, 200)}`;
        if (res.status >= 500) return void failures.push(what);
        if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
          const reader = res.body!.getReader();
          const first = await reader.read();
          await reader.cancel();
          if (!/^(data|:)/.test(Buffer.from(first.value ?? []).toString())) failures.push(`not SSE: ${what}`);
          return void tally.streams++;
        }
        const text = await res.text();
        try {
          JSON.parse(text);
        } catch {
          return void failures.push(`not JSON (${text.slice(0, 80)}): ${what}`);
        }
        if (res.status >= 400) tally.clientErrors++;
        else tally.jsonAnswers++;
      }),
    );
  }
  return { failures, tally };
}

const EDGE_FUZZ_REQUESTS = Number(process.env.OAM_EDGE_FUZZ_REQUESTS ?? 2_000);

/** One HTTP-edge fuzz case (issue 9): what is sent, raw, and which answers are right for it. */
interface EdgeCase {
  kind: string;
  send: (port: number) => Promise<{ status: number; body: string }>;
  ok: (status: number, body: string) => boolean;
}

const ROUTES = ['/mcp', '/mcp/', '/admin', '/admin/audit', '/admin/tasks', '/admin/tasks/x/cancel', '/healthz', '/readyz', '/v1/models', '/a2a', '/nope'];
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'COPY', 'LOCK', 'PURGE', 'SEARCH', 'QUERY', 'SUBSCRIBE', 'M-SEARCH'];
const MCP_LINES = ['Content-Type: application/json', 'Accept: application/json, text/event-stream', `MCP-Protocol-Version: ${MODERN}`];
const INVALID_UTF8 = [[0xff], [0xc0, 0xaf], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe3, 0x81], [0xf8, 0x88, 0x80, 0x80, 0x80]];

/** A tools/call envelope as bytes, with `inside` placed raw where the request text goes. */
function toolsCall(inside: Buffer, extraArgument = ''): Buffer {
  const [before, after] = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'agent_run', arguments: { request: 'MARK' }, _meta: modernMeta(false) },
  }).split('"MARK"');
  return Buffer.concat([Buffer.from(`${before}"`), inside, Buffer.from(`"${extraArgument}${after}`)]);
}

const post = (port: number, body: Buffer, lines: string[] = []) =>
  Buffer.concat([
    Buffer.from(
      head('POST /mcp HTTP/1.1', [
        `Host: 127.0.0.1:${port}`,
        ...MCP_LINES,
        'Mcp-Method: tools/call',
        'Mcp-Name: agent_run',
        `Content-Length: ${body.length}`,
        'Connection: close',
        ...lines,
      ]),
    ),
    body,
  ]);

/** The request classes the edge must refuse cleanly (or serve): never a 5xx, never a crash. */
function edgeCase(random: () => number): EdgeCase {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
  const int = (below: number) => Math.floor(random() * below);
  // The first answer is what counts: a refused request whose body never comes keeps its connection until the request timeout.
  const exchange = (bytes: (port: number) => Buffer | string) => async (port: number) => {
    const socket = await openUpload(port, '');
    const reply = firstReply(socket);
    socket.write(bytes(port));
    const answer = await reply;
    socket.destroy();
    return { status: answer?.status ?? 0, body: answer?.body ?? '' };
  };
  const below500 = (status: number) => status >= 100 && status < 500;
  const cases: (() => EdgeCase)[] = [
    () => {
      const depth = 65 + int(20_000);
      const nested = `,"extra":${'['.repeat(depth)}${']'.repeat(depth)}`;
      return { kind: 'nesting', send: exchange((port) => post(port, toolsCall(Buffer.from('deep'), nested))), ok: (status, body) => status === 400 && body.includes('-32600') };
    },
    () => {
      const bad = Buffer.from(pick(INVALID_UTF8));
      return {
        kind: 'invalid UTF-8',
        send: exchange((port) => post(port, toolsCall(Buffer.concat([Buffer.from('fix '), bad, Buffer.from(' it')])))),
        ok: (status, body) => status === 400 && body.includes('-32700'),
      };
    },
    () => {
      const method = pick(METHODS);
      // The methods some route serves (the edge's SERVED_METHODS: PATCH since schedules and triggers, issue 38).
      const served = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS'].includes(method);
      return {
        kind: 'odd method',
        send: exchange((port) => head(`${method} ${pick(ROUTES)} HTTP/1.1`, [`Host: 127.0.0.1:${port}`, ...MCP_LINES, 'Content-Length: 0', 'Connection: close'])),
        ok: (status) => (served ? below500(status) : status === 405),
      };
    },
    () => {
      const forms = (port: number) => [
        ['Host: evil.example@127.0.0.1'],
        [`Host: evil.example@127.0.0.1:${port}`],
        [`Host: 127.0.0.1:${port}`, 'Host: evil.example'],
        [`Host: 127.0.0.1:${70_000 + int(1e6)}`],
        ['Host: 127.0.0.1:'],
        ['Host: '],
        [`Host: 127.0.0.1:${port}/x`],
        ['Host: [::1'],
        ['Host: xn--80ak6aa92e.com'],
        ['Host: attacker.example'],
        [`Host: 127.0.0.1:${port}`, 'Origin: null'],
        [`Host: 127.0.0.1:${port}`, `Origin: http://127.0.0.1.evil.example:${port}`],
      ];
      return {
        kind: 'Host form',
        send: exchange((port) => head(`${pick(['GET', 'POST'])} ${pick(ROUTES)} HTTP/1.1`, [...pick(forms(port)), 'Content-Length: 0', 'Connection: close'])),
        ok: (status) => status === 400 || status === 403,
      };
    },
    () => {
      // A field far longer than anything the spec allows, up to 4 MB, or a body over the limit (29 MB announced).
      const size = int(4_000_000);
      if (random() < 0.2)
        return {
          kind: 'oversized body',
          send: exchange((port) =>
            head('POST /mcp HTTP/1.1', [`Host: 127.0.0.1:${port}`, ...MCP_LINES, 'Mcp-Method: tools/call', 'Content-Length: 40000000', 'Connection: close']),
          ),
          ok: (status) => status === 413,
        };
      return {
        kind: 'oversized field',
        send: exchange((port) => post(port, toolsCall(Buffer.from('big'), `,"${pick(['extra', 'session_id', 'temperature'])}":"${'x'.repeat(size)}"`))),
        ok: below500,
      };
    },
    () => ({
      kind: 'slow body',
      send: async (port) => {
        const bytes = post(port, toolsCall(Buffer.from('slow')));
        const socket = await openUpload(port, '');
        const reply = firstReply(socket);
        for (let at = 0; at < bytes.length; at += 64) {
          socket.write(bytes.subarray(at, at + 64));
          await new Promise((done) => setTimeout(done, int(5)));
        }
        const answer = await reply;
        socket.destroy();
        return { status: answer?.status ?? 0, body: answer?.body ?? '' };
      },
      ok: below500,
    }),
    () => ({
      kind: 'unfinished body',
      send: async (port) => {
        const bytes = post(port, toolsCall(Buffer.from('never finished'), `,"extra":"${'y'.repeat(int(100_000))}"`));
        const socket = await openUpload(port, bytes.subarray(0, int(bytes.length - 1) + 1).toString('latin1'));
        socket.destroy();
        return { status: 0, body: '' };
      },
      ok: () => true,
    }),
  ];
  return pick(cases)();
}

describe('load, order and malformed input against one service', () => {
  const ollama = new ScriptedOllama();
  let service: ServiceProcess;
  let config: Awaited<ReturnType<typeof writeConfig>>;

  const post = (body: string, headers: Record<string, string>) => fetch(service.url, { method: 'POST', headers, body });
  const headersFor = (method: string, name?: string): Record<string, string> => ({
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': method,
    ...(name !== undefined ? { 'Mcp-Name': headerValue(name) } : {}),
  });
  // Non-ASCII header values travel Base64-sentinel encoded (Streamable HTTP §Request Metadata).
  const headerValue = (value: string) => (/^[\x20-\x7e]*$/.test(value) ? value : `=?base64?${Buffer.from(value).toString('base64')}?=`);

  beforeAll(async () => {
    await ollama.start();
    ollama.setFallback({ content: 'ok', promptEvalCount: 1, evalCount: 1 });
    // One user submits the whole burst: the per-user queue limit (its own tests are in security-round-two) is
    // raised above it so that this suite measures acceptance and order.
    config = await writeConfig(ollama.url, { queue: { poll_interval_ms: 1000, max_queued_per_user: 2000 } });
    service = await new ServiceProcess(config.file).start();
  });

  afterAll(async () => {
    await service.stop();
    await ollama.stop();
  });

  it('accepts 1 000 concurrent agent_run calls and runs them in the order they were accepted (T5.10)', async () => {
    const body = (n: number) =>
      JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: 'agent_run', arguments: { request: `burst ${n}` }, _meta: modernMeta(false) } });
    const responses = await Promise.all(
      Array.from({ length: 1000 }, async (_, n) => {
        const res = await post(body(n), headersFor('tools/call', 'agent_run'));
        return { status: res.status, text: await res.text() };
      }),
    );
    expect(responses.filter((response) => response.status !== 200 || !response.text.includes('status: queued'))).toEqual([]);
    const deadline = Date.now() + 300_000;
    while ((await count(config.database, 'tasks')) > 0) {
      const [{ open }] = await probe<{ open: number }>(config.database, "SELECT COUNT(*) AS open FROM tasks WHERE status IN ('queued', 'planning', 'running')");
      if (Number(open) === 0 || Date.now() > deadline) break;
      await new Promise((done) => setTimeout(done, 250));
    }
    const rows = await probe<{ seq: number; status: string }>(config.database, "SELECT seq, status FROM tasks WHERE request LIKE 'burst %' ORDER BY started_at, seq");
    expect(rows).toHaveLength(1000);
    expect(rows.every((row) => row.status === 'completed')).toBe(true);
    const seqs = rows.map((row) => Number(row.seq));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(ollama.maxConcurrentChats).toBe(1);
  });

  it(`answers ${FUZZ_REQUESTS} malformed requests with Tool errors or JSON-RPC errors: 0 crashes, 0 HTTP 5xx`, async () => {
    const random = prng(42);
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
    const junk = (): unknown =>
      pick<() => unknown>([
        () => null,
        () => random() * 1e6 - 5e5,
        () => Number.MAX_SAFE_INTEGER,
        () => '',
        () => ' \t\n',
        () => 'x'.repeat(Math.floor(random() * 5000)),
        () => '00000000-0000-0000-0000-000000000000',
        () => crypto.randomUUID(),
        () => '\u0000\u202e\ud800',
        () => [junk(), junk()],
        () => ({ nested: { deeper: [junk()] } }),
        () => true,
        () => 'data:image/png;base64,AAAA',
      ])();
    const argumentsFor = (tool: string): unknown => {
      if (random() < 0.1) return junk();
      const base: Record<string, unknown> =
        tool === 'agent_run'
          ? { request: junk(), session_id: junk(), temperature: junk(), images: pick([junk(), [junk()], [{ mime_type: junk(), data_base64: junk() }]]) }
          : { task_id: junk(), session_id: junk() };
      for (const key of Object.keys(base)) if (random() < 0.4) delete base[key];
      if (random() < 0.2) base[String(junk()).slice(0, 20)] = junk();
      return base;
    };
    const requestFor = (): { body: string; headers: Record<string, string> } => {
      const kind = pick(['agent_run', 'agent_status', 'tasks/get', 'tasks/cancel', 'tasks/update', 'raw']);
      const tasks = random() < 0.5;
      if (kind === 'raw') {
        const body = pick([
          '{',
          '[]',
          'null',
          '{"jsonrpc":"2.0"}',
          JSON.stringify({ jsonrpc: '2.0', id: junk(), method: junk(), params: junk() }),
          JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'agent_run', arguments: {} } }),
          'x'.repeat(1000),
        ]);
        return { body, headers: headersFor(String(pick(['tools/call', 'tasks/get', 'x', '']))) };
      }
      if (kind.startsWith('tasks/')) {
        const taskId = pick([junk(), crypto.randomUUID()]);
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: kind, params: { taskId, inputResponses: junk(), _meta: modernMeta(tasks) } });
        return { body, headers: headersFor(kind, typeof taskId === 'string' ? taskId : undefined) };
      }
      const meta = random() < 0.9 ? modernMeta(tasks) : junk();
      const body = JSON.stringify({ jsonrpc: '2.0', id: Math.floor(random() * 1e6), method: 'tools/call', params: { name: kind, arguments: argumentsFor(kind), _meta: meta } });
      return { body, headers: headersFor('tools/call', kind) };
    };

    const tasksBefore = await count(config.database, 'tasks');
    const failures: string[] = [];
    let toolErrors = 0;
    let rpcErrors = 0;
    let accepted = 0;
    for (let batch = 0; batch < FUZZ_REQUESTS / 50; batch++) {
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          const { body, headers } = requestFor();
          const res = await post(body, headers);
          const text = await res.text();
          if (res.status >= 500) return void failures.push(`${res.status} for ${body.slice(0, 200)}`);
          const json =
            text.startsWith('event:') || text.includes('\ndata:')
              ? JSON.parse(
                  text
                    .split('\n')
                    .filter((l) => l.startsWith('data:'))
                    .at(-1)!
                    .slice(5),
                )
              : text
                ? JSON.parse(text)
                : null;
          if (json?.error) rpcErrors++;
          else if (json?.result?.isError === true) toolErrors++;
          else if (json?.result?.resultType === 'task' || String(json?.result?.content?.[0]?.text ?? '').includes('status: queued')) {
            // Mutations sometimes leave a valid call; it must really be one.
            const request = JSON.parse(body).params.arguments?.request;
            const valid = typeof request === 'string' && request.trim() !== '' && !request.includes('\0') && request.isWellFormed();
            if (valid) accepted++;
            else failures.push(`accepted an invalid request: ${body.slice(0, 300)}`);
          }
        }),
      );
    }
    expect(failures).toEqual([]);
    const health = await fetch(service.url, { method: 'GET' });
    expect(health.status).toBe(405);
    process.stderr.write(
      `fuzz: ${FUZZ_REQUESTS} requests, ${toolErrors} Tool errors, ${rpcErrors} JSON-RPC errors, ${accepted} valid calls accepted, 0 5xx; tasks stored: ${(await count(config.database, 'tasks')) - tasksBefore}\n`,
    );
  });

  it(`answers ${SURFACE_FUZZ_REQUESTS} malformed Chat API and A2A calls with their errors, answers or streams: 0 5xx, nothing but JSON or SSE`, async () => {
    const base = `http://127.0.0.1:${service.port}`;
    const { failures, tally } = await fuzzChatAndA2a(base, SURFACE_FUZZ_REQUESTS, prng(4242));
    expect(failures).toEqual([]);
    expect((await fetch(`${base}/v1/models`)).status).toBe(200);
    process.stderr.write(`surface fuzz: ${SURFACE_FUZZ_REQUESTS} requests, ${tally.clientErrors} 4xx, ${tally.jsonAnswers} JSON answers, ${tally.streams} streams, 0 5xx\n`);
  });

  it(`answers ${EDGE_FUZZ_REQUESTS} raw HTTP requests (nesting, invalid UTF-8, odd methods and Host forms, oversized fields, slow and unfinished bodies) without a 5xx or a stack trace`, async () => {
    const random = prng(9);
    const failures: string[] = [];
    const kinds = new Map<string, number>();
    for (let batch = 0; batch < EDGE_FUZZ_REQUESTS / 20; batch++) {
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const fuzzCase = edgeCase(random);
          const { status, body } = await fuzzCase.send(service.port);
          kinds.set(fuzzCase.kind, (kinds.get(fuzzCase.kind) ?? 0) + 1);
          if (!fuzzCase.ok(status, body)) failures.push(`${fuzzCase.kind}: ${status} ${body.slice(0, 200)}`);
        }),
      );
    }
    expect(failures.slice(0, 40)).toEqual([]);
    expect((await fetch(`${service.url.replace(/\/mcp$/, '')}/healthz`)).status).toBe(200);
    expect(service.stderr).not.toMatch(/\n\s+at |Maximum call stack/);
    process.stderr.write(`edge fuzz: ${EDGE_FUZZ_REQUESTS} requests (${[...kinds].map(([kind, n]) => `${kind} ${n}`).join(', ')}), 0 5xx\n`);
  });
});

const IDENTITY_CASES = Number(process.env.OAM_FUZZ_IDENTITY_CASES ?? 1000);
const OVERSIZED_CASES = Number(process.env.OAM_FUZZ_OVERSIZED_CASES ?? 60);

/** One request by node:http, which can repeat a header line and send raw bytes (fetch joins repeats into one value). */
function rawPost(port: number, path: string, headers: Record<string, string | string[]>, body: string) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    // As a Buffer: node:http writes the header block in the encoding of a string first chunk sent with
    // it (UTF-8), and as Latin-1 (the bytes as given) otherwise.
    req.end(Buffer.from(body));
  });
}

/**
 * Identity headers as a confused or hostile proxy chain sends them: one of user, email or groups
 * repeated or comma-joined, beside an email header naming `fallback` (who must never be let in), with
 * raw UTF-8 and invalid bytes. Returns the headers and whether the request must be refused.
 */
function identityCase(random: () => number, fallback: string): { headers: Record<string, string | string[]>; refused: boolean } {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
  const wire = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
  const name = pick(['alice@example.com', wire('山田'), wire('José'), 'bob']);
  const headers: Record<string, string | string[]> = { 'X-Forwarded-Email': fallback, 'X-Forwarded-Groups': 'dev' };
  switch (pick(['repeated user', 'joined user', 'repeated email', 'repeated groups', 'invalid utf-8', 'clean'])) {
    case 'repeated user':
      headers['X-Forwarded-User'] = [name, pick([name, 'admin'])];
      return { headers, refused: true };
    case 'joined user':
      headers['X-Forwarded-User'] = `${name},${pick(['admin', name, ''])}`;
      return { headers, refused: true };
    case 'repeated email':
      headers['X-Forwarded-User'] = name;
      headers['X-Forwarded-Email'] = [fallback, fallback];
      return { headers, refused: true };
    case 'repeated groups':
      headers['X-Forwarded-User'] = name;
      headers['X-Forwarded-Groups'] = ['dev', 'platform-admins'];
      return { headers, refused: true };
    case 'invalid utf-8':
      headers['X-Forwarded-User'] = `${name}\xff\xfe`;
      return { headers, refused: true };
    default:
      headers['X-Forwarded-User'] = name;
      return { headers, refused: false };
  }
}

/** A tools/call or tasks/get whose one field is huge: a long key, a long string, a wide array, deep nesting. */
function oversizedCase(random: () => number): { method: string; body: string } {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)];
  const size = 1_000_000 + Math.floor(random() * 4_000_000);
  let deep: unknown = 'leaf';
  for (let n = 0; n < 200; n++) deep = [deep];
  const field = pick<() => [string, unknown]>([
    () => ['k'.repeat(size), 1],
    () => ['note', 'v'.repeat(size)],
    () => ['list', Array.from({ length: size / 8 }, (_, n) => n)],
    () => ['deep', deep],
  ])();
  if (random() < 0.5) {
    return { method: 'tasks/get', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: field[1], _meta: modernMeta(true) } }) };
  }
  const args = { request: pick(['x', 'y'.repeat(size)]), [field[0]]: field[1] };
  return { method: 'tools/call', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'agent_run', arguments: args, _meta: modernMeta(false) } }) };
}

describe('identity headers and oversized fields against a service behind an SSO proxy', () => {
  const ollama = new ScriptedOllama();
  let service: ServiceProcess;
  let config: Awaited<ReturnType<typeof writeConfig>>;
  const mcpHeaders = (method: string) => ({
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': method,
  });

  beforeAll(async () => {
    await ollama.start();
    config = await writeConfig(ollama.url, {
      auth: { mode: 'proxy_headers', trusted_proxies: ['127.0.0.1/32', '::1/128'], admin_groups: ['platform-admins'], email_header: 'X-Forwarded-Email' },
    });
    service = await new ServiceProcess(config.file).start();
  });

  afterAll(async () => {
    await service.stop();
    await ollama.stop();
  });

  it(`refuses ${IDENTITY_CASES} ambiguous identity header sets with 401 and never falls back to the email header`, async () => {
    const random = prng(7);
    const fallback = 'fallback-victim@example.com';
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: modernMeta(false) } });
    const failures: string[] = [];
    for (let batch = 0; batch < IDENTITY_CASES / 20; batch++) {
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const { headers, refused } = identityCase(random, fallback);
          const { status } = await rawPost(service.port, '/mcp', { ...mcpHeaders('tools/list'), ...headers }, body);
          if (status >= 500 || (refused ? status !== 401 : status !== 200)) failures.push(`${status} for ${JSON.stringify(headers)}`);
        }),
      );
    }
    expect(failures).toEqual([]);
    expect(await probe(config.database, 'SELECT seq FROM audit_events WHERE actor = ?', fallback)).toEqual([]);
  });

  it(`stores a bounded audit row for each of ${OVERSIZED_CASES} calls with one 1-5 MB field, and the admin listing stays bounded`, async () => {
    const random = prng(11);
    const failures: string[] = [];
    for (let n = 0; n < OVERSIZED_CASES; n++) {
      const { method, body } = oversizedCase(random);
      const { status } = await rawPost(
        service.port,
        '/mcp',
        { ...mcpHeaders(method), ...(method === 'tools/call' ? { 'Mcp-Name': 'agent_run' } : {}), 'X-Forwarded-User': 'fuzzer' },
        body,
      );
      if (status >= 500) failures.push(`${status} for ${body.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
    const [{ longest }] = await probe<{ longest: number }>(config.database, "SELECT MAX(length(detail)) AS longest FROM audit_events WHERE actor = 'fuzzer'");
    expect(Number(longest)).toBeLessThan(64 * 1024);
    const page = await fetch(`http://127.0.0.1:${service.port}/admin/audit?limit=50`, { headers: { 'X-Forwarded-User': 'carol', 'X-Forwarded-Groups': 'platform-admins' } });
    expect(page.status).toBe(200);
    expect((await page.text()).length).toBeLessThan(50 * 64 * 1024);
  });
});
