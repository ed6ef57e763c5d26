import { describe, expect, it } from '@jest/globals';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { PassThrough } from 'node:stream';
import { RequestLimits } from '../../src/config/request-limits.js';
import { LineLimitedStdioTransport } from '../../src/mcp/stdio-line-transport.js';

/** The transport on in-memory streams: what `node dist/stdio.js` does with stdin and stdout, without a process. */
async function open(maxLineBytes: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const transport = new LineLimitedStdioTransport(maxLineBytes, stdin, stdout);
  const received: JSONRPCMessage[] = [];
  let closes = 0;
  transport.onmessage = (message) => received.push(message);
  transport.onclose = () => closes++;
  await transport.start();
  let written = '';
  stdout.on('data', (chunk: Buffer) => (written += chunk.toString()));
  const frames = () =>
    written
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { id: unknown; error?: { code: number; message: string } });
  const tick = () => new Promise<void>((done) => setImmediate(done));
  /** Resolves once everything written to stdin so far has gone through the transport and its answers through stdout. */
  const drained = async () => {
    while (stdin.writableLength > 0 || stdin.readableLength > 0) await tick();
    while (stdout.readableLength > 0) await tick();
    await tick();
  };
  return { stdin, transport, received, frames, drained, closes: () => closes };
}

const ping = (id: number) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`;

describe('LineLimitedStdioTransport (MCP stdio: one JSON-RPC message per line, with a line limit)', () => {
  it('accepts a line as long as the default image limits allow (one 8 MiB PNG in a tools/call), whole', async () => {
    const { stdin, received, frames, drained } = await open(new RequestLimits(20 * 1024 * 1024, 0).bodyBytes('stdio'));
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(8 * 1024 * 1024 - 8, 7)]).toString('base64');
    const call = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'agent_run', arguments: { request: 'describe it', images: [{ mime_type: 'image/png', data_base64: png }] } },
    };
    const line = `${JSON.stringify(call)}\n`;
    expect(line.length).toBeGreaterThan(11_000_000);
    // In pieces, as a pipe delivers it.
    for (let at = 0; at < line.length; at += 65_536) stdin.write(line.slice(at, at + 65_536));
    await drained();
    expect(frames()).toEqual([]);
    expect(received).toHaveLength(1);
    expect((received[0] as unknown as { params: typeof call.params }).params.arguments.images[0].data_base64).toBe(png);
  });

  it('answers a line over the limit with -32600 (id null), drops it to its newline, and goes on', async () => {
    const { stdin, received, frames, drained, closes } = await open(1000);
    stdin.write('{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"');
    for (let n = 0; n < 40; n++) stdin.write('z'.repeat(999));
    stdin.write('"}}\n');
    stdin.write(ping(3));
    await drained();
    expect(frames()).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/longer than 1000 bytes/) } }]);
    expect(received).toEqual([{ jsonrpc: '2.0', id: 3, method: 'ping' }]);
    expect(closes()).toBe(0);
  });

  it('answers a line that is not JSON-RPC, or not UTF-8, with -32700 and goes on; skips blank lines and strips CR', async () => {
    const { stdin, received, frames, drained } = await open(1000);
    stdin.write('not json\n');
    stdin.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"p\xff'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]));
    stdin.write('\n\r\n');
    stdin.write(ping(4).replace('\n', '\r\n'));
    await drained();
    expect(frames().map((frame) => frame.error?.code)).toEqual([-32700, -32700]);
    expect(received).toEqual([{ jsonrpc: '2.0', id: 4, method: 'ping' }]);
  });

  it('takes several messages from one chunk and one message from many chunks', async () => {
    const { stdin, received, drained } = await open(1000);
    stdin.write(ping(1) + ping(2) + ping(3).slice(0, 10));
    stdin.write(ping(3).slice(10, 20));
    stdin.write(ping(3).slice(20));
    await drained();
    expect(received.map((message) => (message as { id: number }).id)).toEqual([1, 2, 3]);
  });

  it('fires onclose once when stdin ends, and refuses to send afterwards', async () => {
    const { stdin, transport, closes, drained } = await open(1000);
    stdin.end();
    await drained();
    stdin.destroy();
    await drained();
    expect(closes()).toBe(1);
    await expect(transport.send({ jsonrpc: '2.0', id: 1, result: {} })).rejects.toThrow(/closed/);
  });
});
