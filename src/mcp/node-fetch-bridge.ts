import { isAscii, isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';
import type { BodyLease } from '../http/body-budget.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';

export type BodyResult =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'too_large' }
  /** The body would not fit in what all bodies together may hold now (BodyBudget). */
  | { kind: 'busy' }
  | { kind: 'invalid'; reason: string }
  /** Valid JSON nested deeper than MAX_JSON_DEPTH; the value is kept for its id and method. */
  | { kind: 'too_deep'; value: unknown }
  | { kind: 'aborted' };

/**
 * Reads and parses a JSON body with a size limit (checked on Content-Length before reading, and while
 * reading). Collecting Buffers and decoding once is several times cheaper for a 27 MiB image payload
 * than the SDK's web-stream path, which decodes chunk by chunk and copies each chunk. Past the limit
 * the rest is not collected, and the stream is left open for `refuse`. What is held is taken from
 * `lease` first: the declared length before anything is allocated, else each chunk as it arrives.
 */
export function readJsonBody(req: IncomingMessage, maxBytes: number, lease: BodyLease): Promise<BodyResult> {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE') return Promise.resolve({ kind: 'none' });
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return Promise.resolve({ kind: 'too_large' });
  // With a Content-Length the body is copied into one buffer as it arrives, so the copying (and the
  // page faults of a fresh 27 MiB allocation) overlap the transfer instead of following it.
  const declared = Number(req.headers['content-length']);
  const preallocate = Number.isSafeInteger(declared) && declared > 0;
  if (preallocate && !lease.take(declared)) return Promise.resolve({ kind: 'busy' });
  return new Promise((resolve) => {
    const whole = preallocate ? Buffer.allocUnsafe(declared) : null;
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (result: BodyResult) => {
      req.off('data', collect).off('end', parse);
      resolve(result);
    };
    const collect = (chunk: Buffer) => {
      if (size + chunk.length > maxBytes || (whole && size + chunk.length > whole.length)) return stop({ kind: 'too_large' });
      if (whole) chunk.copy(whole, size);
      else if (lease.take(chunk.length)) chunks.push(chunk);
      else return stop({ kind: 'busy' });
      size += chunk.length;
    };
    const parse = () => {
      if (size === 0) return resolve({ kind: 'none' });
      const text = decodeUtf8(whole ? whole.subarray(0, size) : Buffer.concat(chunks, size));
      if (text === null) return resolve({ kind: 'invalid', reason: 'the body is not valid UTF-8' });
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return resolve({ kind: 'invalid', reason: 'the body is not valid JSON' });
      }
      resolve(nestsDeeperThan(value, MAX_JSON_DEPTH) ? { kind: 'too_deep', value } : { kind: 'json', value });
    };
    req.on('data', collect).once('end', parse);
    // A client that goes away mid-body: nothing to answer (resolving twice is a no-op).
    req.once('close', () => resolve({ kind: 'aborted' }));
  });
}

/**
 * UTF-8 text of `bytes`, or null when they are not UTF-8 (decoding would turn them into U+FFFD and
 * store text the client never sent). A body that is all ASCII (every request whose non-ASCII text is
 * escaped, and most image payloads) is copied byte for byte, which is tens of times cheaper than UTF-8
 * decoding for a body of Base64 images; ASCII is a subset of Latin-1 and of UTF-8, so the text is the
 * same. Otherwise `isUtf8` (native, one pass) checks the bytes before they are decoded.
 */
function decodeUtf8(bytes: Buffer): string | null {
  if (isAscii(bytes)) return bytes.toString('latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : null;
}

/**
 * Serves one request with the SDK's web-standard handler, handing it the parsed body (its documented
 * fast path) instead of a Request that carries the body again. The response is written back as the
 * SDK's own `toNodeHandler` does: status and headers, then the body with backpressure; a client that
 * goes away aborts the exchange (request-scoped cancellation).
 */
export async function serveParsed(
  handler: McpHttpHandler,
  req: IncomingMessage,
  res: ServerResponse,
  options: { authInfo: AuthInfo; parsedBody: unknown },
): Promise<void> {
  const abort = new AbortController();
  let finished = false;
  res.on('close', () => {
    if (!finished) abort.abort();
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'content-length' || name === 'transfer-encoding') continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method, headers, signal: abort.signal });
  const response = await handler.fetch(request, {
    authInfo: options.authInfo,
    ...(options.parsedBody !== undefined ? { parsedBody: options.parsedBody } : {}),
  });
  if (!response.body || response.headers.get('content-type')?.startsWith('application/json')) {
    // A JSON answer is one body: written in one go, with its length, instead of chunk by chunk.
    const body = Buffer.from(await response.arrayBuffer());
    finished = true;
    res.writeHead(response.status, { ...Object.fromEntries(response.headers), 'content-length': body.length });
    return void res.end(body);
  }
  res.writeHead(response.status, Object.fromEntries(response.headers));
  for await (const chunk of response.body) {
    if (abort.signal.aborted) break;
    if (!res.write(chunk)) await new Promise<void>((resolve) => (res.once('drain', resolve), res.once('close', resolve)));
  }
  finished = true;
  res.end();
}

export function writeJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(body);
}
