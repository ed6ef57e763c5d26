import type { IncomingMessage, ServerResponse } from 'node:http';

/** Bytes a refused request may still send, read and discarded, before the connection is cut. */
const DISCARD_LIMIT = 64 * 1024 * 1024;

/**
 * Answers a request that will not be served, whatever of its body is still to come, and closes the
 * connection (`Connection: close`: nothing of that body is ever buffered, and the connection is not
 * reused). The answer is written at once, but the connection ends only once the client has finished
 * sending (up to DISCARD_LIMIT, read and dropped, or until the server's request timeout): closing a
 * socket with unread data resets it, and a client still writing would see a broken pipe instead of
 * the answer.
 */
export function refuse(req: IncomingMessage, res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), Connection: 'close' });
  if (req.readableEnded) return void res.end(text);
  res.write(text);
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_LIMIT) req.socket.destroy();
  });
  req.once('end', () => res.end());
  req.resume();
}

/** The JSON-RPC error object an HTTP-level refusal of an MCP request carries (the id is unknown then). */
export const jsonRpcError = (code: number, message: string) => ({ jsonrpc: '2.0', id: null, error: { code, message } });
