import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

export const MODERN = '2026-07-28';
export const CLIENT_INFO = { name: 'e2e', version: '1.0.0' };

/**
 * fetch whose `json()` parses in the test's own realm. Under Jest's VM modules, native
 * `Response.json()` builds objects with the outer realm's Object.prototype, which the ext-tasks
 * client's plain-object check rejects ("Expected a JSON value"); a real client has one realm.
 */
const sameRealmFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const response = await fetch(input, init);
  return Object.assign(response, { json: async () => JSON.parse(await response.text()) as unknown });
};

/** The v2 SDK client pinned to 2026-07-28 (it does not declare the Tasks extension). */
export async function modernClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: sameRealmFetch, requestInit: { headers } }));
  return client;
}

/** The v1 SDK client: a real legacy (2025-11-25, `initialize`) client. */
export async function legacyClient(url: string): Promise<LegacyClient> {
  const client = new LegacyClient({ name: 'legacy-e2e', version: '1.0.0' });
  await client.connect(new LegacyHttpTransport(new URL(url)));
  return client;
}

export type RawResponse = { kind: 'result'; result: any } | { kind: 'error'; error: { code: number; message: string; data?: unknown } };
export type RawDispatch = (request: { method: string; params?: any }, options?: { signal?: AbortSignal; context?: { headers?: Record<string, string> } }) => Promise<RawResponse>;

let rawId = 1;

/** The headers of a modern-era MCP POST of `method`; `name` (the tool or Task it is about) goes in Mcp-Name. */
export const mcpPostHeaders = (method: string, name?: string): Record<string, string> => ({
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': MODERN,
  'Mcp-Method': method,
  ...(name ? { 'Mcp-Name': name } : {}),
});

/**
 * POSTs `body` to the MCP endpoint as it is: what the SDK clients would not send (odd arguments, bad bytes, deep
 * nesting). Each on a connection of its own: building a body of many megabytes can block the event loop past the
 * server's keep-alive timeout, and a pooled connection the server has closed meanwhile fails the write (EPIPE).
 */
export const postMcp = (url: string, method: string, body: string | Buffer, name?: string) =>
  fetch(url, { method: 'POST', headers: { ...mcpPostHeaders(method, name), Connection: 'close' }, body: typeof body === 'string' ? body : new Uint8Array(body) });

/** Modern-era JSON-RPC over HTTP by hand (what the ext-tasks client needs, and malformed-input tests use). */
export function httpRawDispatch(url: string, extraHeaders: Record<string, string> = {}): RawDispatch {
  return async (request, options = {}) => {
    const res = await fetch(url, {
      method: 'POST',
      signal: options.signal,
      headers: { ...mcpPostHeaders(request.method, request.params?.taskId ?? request.params?.name), ...extraHeaders, ...(options.context?.headers ?? {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: `raw-${rawId++}`, ...request }),
    });
    return parseRpc(await res.text(), res.headers.get('content-type'));
  };
}

export function parseRpc(text: string, contentType: string | null): RawResponse {
  const json = /event-stream/.test(contentType ?? '')
    ? JSON.parse(
        text
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .at(-1)!
          .slice(5),
      )
    : JSON.parse(text);
  return json.error ? { kind: 'error', error: json.error } : { kind: 'result', result: json.result };
}

/** `_meta` of a modern request; `tasks` adds the Tasks extension declaration. */
export function modernMeta(tasks: boolean) {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {},
  };
}

/** An ext-tasks input handler: gets each of a Task's `inputRequests` and returns its answer. */
export type InputRequestHandler = (request: { kind: string; params: any }, context: { taskId?: string; inputId?: string }) => Promise<unknown>;

/** A Tasks-aware session (ext-tasks client) over an already connected pinned v2 client. */
export function tasksSession(client: Client, rawDispatch: RawDispatch, onInputRequest?: InputRequestHandler) {
  return createTaskSessionFromClient(
    client as never,
    {
      endpointId: 'e2e',
      rawDispatch: rawDispatch as never,
      v2RequestFraming: { protocolVersion: MODERN, clientInfo: CLIENT_INFO, clientCapabilities: {} },
      ...(onInputRequest ? { onInputRequest } : {}),
    } as never,
  );
}

/**
 * A raw channel on a connected stdio transport: responses to `raw-` ids resolve here, everything else
 * still reaches the SDK client.
 */
export function stdioRawDispatch(transport: Transport): RawDispatch {
  const pending = new Map<string, (response: RawResponse) => void>();
  const previous = transport.onmessage;
  transport.onmessage = (message: any, extra?: any) => {
    const resolve = typeof message.id === 'string' ? pending.get(message.id) : undefined;
    if (!resolve) return previous?.(message, extra);
    pending.delete(message.id);
    resolve(message.error ? { kind: 'error', error: message.error } : { kind: 'result', result: message.result });
  };
  return (request) =>
    new Promise((resolve) => {
      const id = `raw-${rawId++}`;
      pending.set(id, resolve);
      void transport.send({ jsonrpc: '2.0', id, ...request } as never);
    });
}

export const textOf = (result: unknown) => ((result as { content?: { text: string }[] }).content ?? []).map((block) => block.text).join('\n');

/** Parses the `key: value` lines of an agent_status / agent_run text. */
export function fieldsOf(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+):\s?(.*)$/.exec(line);
    if (match) fields[match[1]] = match[2];
  }
  return fields;
}

/** Polls agent_status until the Task reaches a terminal state. */
export async function waitForTerminal(call: (taskId: string) => Promise<string>, taskId: string, timeoutMs = 15_000): Promise<Record<string, string>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const fields = fieldsOf(await call(taskId));
    if (['completed', 'failed', 'cancelled'].includes(fields.status)) return fields;
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${fields.status}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}
