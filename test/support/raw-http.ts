import { connect, type Socket } from 'node:net';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent, for pipelining tests that expect several answers. */
  raw: string;
}

/** Parses the first HTTP response in `raw` (head and, by Content-Length, body). */
export function parseReply(raw: string): RawReply {
  const end = raw.indexOf('\r\n\r\n');
  const head = (end < 0 ? raw : raw.slice(0, end)).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = end < 0 ? '' : raw.slice(end + 4);
  const length = Number(headers['content-length']);
  return { status, headers, body: Number.isFinite(length) ? rest.slice(0, length) : rest, raw };
}

/**
 * Writes `bytes` to the service as they are (what fetch and node:http refuse to send: doubled Host
 * lines, odd methods, bad encodings) and collects what comes back until the server closes, or until
 * `settleMs` passes without the connection closing (a server that waits for more is answered then).
 */
export function rawExchange(port: number, bytes: string | Buffer, settleMs = 5_000): Promise<RawReply & { closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let raw = '';
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseReply(raw), closed });
    };
    const timer = setTimeout(() => done(false), settleMs);
    socket.on('data', (chunk: Buffer) => (raw += chunk.toString('latin1')));
    socket.on('close', () => done(true));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? done(true) : reject(error)));
  });
}

/** An open connection that has sent `head` and keeps the body back: for unfinished and slow uploads. */
export function openUpload(port: number, head: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head, () => resolve(socket)));
    socket.on('error', reject);
  });
}

/** The first response on `socket`, once its head and Content-Length body have arrived (null if it closes first). */
export function firstReply(socket: Socket): Promise<RawReply | null> {
  return new Promise((resolve) => {
    let raw = '';
    const onData = (chunk: Buffer) => {
      raw += chunk.toString('latin1');
      const reply = parseReply(raw);
      if (reply.status && Buffer.byteLength(reply.body) >= Number(reply.headers['content-length'] ?? 0)) finish(reply);
    };
    const finish = (reply: RawReply | null) => {
      socket.off('data', onData);
      resolve(reply);
    };
    socket.on('data', onData);
    socket.once('close', () => finish(raw ? parseReply(raw) : null));
  });
}

/** A request head in wire form; `lines` are header lines as sent (repeats allowed). */
export const head = (requestLine: string, lines: string[]) => `${requestLine}\r\n${lines.join('\r\n')}\r\n\r\n`;
