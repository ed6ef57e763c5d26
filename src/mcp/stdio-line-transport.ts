import { deserializeMessage, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import type { Readable, Writable } from 'node:stream';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * MCP's stdio binding (one JSON-RPC message per line) with a line limit of our own. The SDK's
 * StdioServerTransport closes the session on the first line over its 10 MiB buffer, and then no
 * longer sees stdin end; here a line over `maxLineBytes` is answered with a JSON-RPC error (id null)
 * and skipped to its end without being kept, an unparsable line likewise, and the session goes on.
 * `onclose` fires once when stdin ends or closes, whatever came before.
 */
export class LineLimitedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private size = 0;
  /** Inside a line already answered as too long: its bytes are dropped up to the next newline. */
  private skipping = false;
  private closed = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly stdin: Readable = process.stdin,
    private readonly stdout: Writable = process.stdout,
  ) {}

  async start(): Promise<void> {
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStreamError);
    this.stdin.on('end', this.onEnd);
    this.stdin.on('close', this.onEnd);
    this.stdout.on('error', this.onStreamError);
    if (this.stdin.readableEnded || this.stdin.destroyed) setImmediate(this.onEnd);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the stdio transport is closed'));
    return new Promise((resolve, reject) => {
      this.stdout.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('end', this.onEnd);
    this.stdin.off('close', this.onEnd);
    this.chunks = [];
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer) => {
    for (let start = 0; start < chunk.length;) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      if (!this.skipping) this.append(chunk.subarray(start, end));
      if (newline === -1) return;
      if (this.skipping) this.skipping = false;
      else this.line(Buffer.concat(this.chunks, this.size));
      this.chunks = [];
      this.size = 0;
      start = newline + 1;
    }
  };

  private append(part: Buffer): void {
    if (this.size + part.length <= this.maxLineBytes) {
      this.chunks.push(part);
      this.size += part.length;
      return;
    }
    this.chunks = [];
    this.size = 0;
    this.skipping = true;
    this.reject(-32600, `Invalid Request: a message longer than ${this.maxLineBytes} bytes (the configured image limits plus 1 MiB) is not accepted`);
  }

  private line(bytes: Buffer): void {
    const text = bytes.at(-1) === 0x0d ? bytes.subarray(0, -1) : bytes;
    if (text.length === 0) return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(utf8.decode(text));
    } catch {
      this.reject(-32700, 'Parse error: a line is not one JSON-RPC message in UTF-8');
      return;
    }
    this.onmessage?.(message);
  }

  private reject(code: number, message: string): void {
    this.send({ jsonrpc: '2.0', id: null, error: { code, message } } as unknown as JSONRPCMessage).catch((error: Error) => this.onerror?.(error));
  }

  private readonly onStreamError = (error: Error) => this.onerror?.(error);
  private readonly onEnd = () => void this.close();
}
