import { afterEach, describe, expect, it } from '@jest/globals';
import type { Transport } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { AsyncResource } from 'node:async_hooks';
import { z } from 'zod';
import { ServerConnection, type CallScope } from '../../src/mcp-client/server-connection.js';

/**
 * Several calls through one shared connection at once (two Tasks on one server): each has its own result, roots,
 * cancel and person. The server is the 2025-11-25 SDK that the reference servers are built on, in this process;
 * like server-filesystem it reads its roots again when told they changed.
 */

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** A promise the test settles by name: a tool call waits on its gate, so that calls overlap for certain. */
class Gates {
  private readonly opened = new Map<string, () => void>();
  private readonly waits = new Map<string, Promise<void>>();
  wait(name: string): Promise<void> {
    if (!this.waits.has(name)) this.waits.set(name, new Promise((open) => this.opened.set(name, open)));
    return this.waits.get(name)!;
  }
  open(name: string): void {
    void this.wait(name);
    this.opened.get(name)!();
  }
}

/**
 * A linked pair that delivers each message later, from a context of its own, as a pipe or a socket does: what the
 * server sends during a call carries nothing of the call it belongs to. The SDK's in-memory pair delivers at once,
 * inside the sender's call.
 */
function pipePair(): [Transport, Transport] {
  const pair = InMemoryTransport.createLinkedPair();
  for (const side of pair) {
    const reader = new AsyncResource('pipe');
    const send = side.send.bind(side);
    side.send = (message, options) => new Promise((sent) => reader.runInAsyncScope(() => setImmediate(() => sent(send(message, options)))));
  }
  return pair;
}

async function serve(pair: () => [Transport, Transport] = pipePair) {
  const gates = new Gates();
  const cancelled: string[] = [];
  const server = new McpServer({ name: 'shared', version: '1.0.0' });
  server.registerTool('where', { description: 'the roots it may work in, once its gate opens', inputSchema: { gate: z.string() } }, async ({ gate }, extra) => {
    extra.signal.addEventListener('abort', () => cancelled.push(gate));
    gates.open(`${gate} started`);
    await gates.wait(gate);
    const { roots } = await server.server.listRoots();
    return { content: [{ type: 'text', text: `${gate}: ${roots.map((root) => root.uri).join(' ')}` }] };
  });
  server.registerTool('ask', { description: 'asks the person', inputSchema: { who: z.string() } }, async ({ who }) => {
    const answer = await server.server.elicitInput({ message: `a form for ${who}`, requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } });
    return { content: [{ type: 'text', text: `${who}: ${answer.action}` }] };
  });
  // As server-filesystem does: told that the roots changed, it reads them again.
  server.server.setNotificationHandler(RootsListChangedNotificationSchema, async () => void (await server.server.listRoots()));
  const connection = new ServerConnection({
    name: 'shared',
    sampling: false,
    restart: false,
    timeoutMs: 5000,
    transport: () => {
      const [client, side] = pair();
      void server.connect(side);
      return client;
    },
  });
  await connection.connect();
  expect(connection.state).toBe('connected');
  stops.push(
    () => connection.stop(),
    () => server.close(),
  );
  return { connection, gates, cancelled };
}

const workspace = (name: string) => [{ uri: `file:///work/${name}`, name: 'session workspace' }];
const text = (result: { content: unknown }) => (result.content as { text: string }[])[0].text;
const options = (signal = new AbortController().signal) => ({ signal, timeoutMs: 5000 });
const call = (connection: ServerConnection, gate: string, roots: string, signal?: AbortSignal) =>
  connection.call('where', { gate }, { roots: workspace(roots) }, options(signal)).then(text);

describe('two calls at once through one connection', () => {
  it('each gets its own result, read under its own roots: a call for other roots waits until the first is done', async () => {
    const { connection, gates } = await serve();
    const first = call(connection, 'a', 'alice');
    const second = call(connection, 'b', 'bob');
    gates.open('b');
    gates.open('a');
    expect(await Promise.all([first, second])).toEqual(['a: file:///work/alice', 'b: file:///work/bob']);
  });

  it('runs calls under the same roots side by side, and a cancel of one leaves the other running', async () => {
    const { connection, gates, cancelled } = await serve();
    const stop = new AbortController();
    const first = call(connection, 'a', 'alice', stop.signal);
    const second = call(connection, 'b', 'alice');
    // Both run at the server; a third, for other roots, waits for them. Then the first and the third are cancelled.
    const waiting = call(connection, 'c', 'bob', stop.signal);
    await Promise.all([gates.wait('a started'), gates.wait('b started')]);
    stop.abort(new Error('the Task was cancelled'));
    await expect(first).rejects.toThrow('the Task was cancelled');
    await expect(waiting).rejects.toThrow('the Task was cancelled');
    gates.open('b');
    expect(await second).toBe('b: file:///work/alice');
    expect(cancelled).toEqual(['a']);
    // The roots are free again for another workspace.
    gates.open('d');
    expect(await call(connection, 'd', 'carol')).toBe('d: file:///work/carol');
  });
});

describe("a server's form during calls of two people", () => {
  const asking = (who: string, asked: string[]): CallScope => ({
    roots: workspace('shared'),
    elicitor: async (request) => {
      asked.push(`${who} saw ${request.message}`);
      return { action: 'accept', content: { ok: true } };
    },
  });

  it('goes to the person whose call asked it where the request arrives inside that call', async () => {
    const { connection } = await serve(() => InMemoryTransport.createLinkedPair());
    const asked: string[] = [];
    const answers = await Promise.all(['alice', 'bob'].map((who) => connection.call('ask', { who }, asking(who, asked), options()).then(text)));
    expect(answers).toEqual(['alice: accept', 'bob: accept']);
    expect(asked.sort()).toEqual(['alice saw a form for alice', 'bob saw a form for bob']);
  });

  it('is declined, and shown to nobody, where it cannot be told whose call it belongs to', async () => {
    const { connection } = await serve();
    const asked: string[] = [];
    const answers = await Promise.all(['alice', 'bob'].map((who) => connection.call('ask', { who }, asking(who, asked), options()).then(text)));
    expect(answers).toEqual(['alice: decline', 'bob: decline']);
    expect(asked).toEqual([]);
    // One call alone: its person is asked.
    expect(text(await connection.call('ask', { who: 'alice' }, asking('alice', asked), options()))).toBe('alice: accept');
    expect(asked).toEqual(['alice saw a form for alice']);
  });
});
