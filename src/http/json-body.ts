import { isAscii, isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { BodyLease } from './body-budget.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';

/** What became of a request body read by `readJsonBody` (/mcp, the Chat API and A2A read their own). */
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

/** What became of a request body read as bytes by `readBodyBytes` (a trigger's signed event). */
export type BytesResult = Extract<BodyResult, { kind: 'none' | 'too_large' | 'busy' | 'aborted' }> | { kind: 'bytes'; bytes: Buffer };

/**
 * Reads and parses a JSON body with a size limit (checked on Content-Length before reading, and while
 * reading). Collecting Buffers and decoding once is several times cheaper for a 27 MiB image payload
 * than the SDK's web-stream path, which decodes chunk by chunk and copies each chunk.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes: number, lease: BodyLease): Promise<BodyResult> {
  const read = await readBodyBytes(req, maxBytes, lease);
  if (read.kind !== 'bytes') return read;
  const text = decodeUtf8(read.bytes);
  if (text === null) return { kind: 'invalid', reason: 'the body is not valid UTF-8' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'invalid', reason: 'the body is not valid JSON' };
  }
  return nestsDeeperThan(value, MAX_JSON_DEPTH) ? { kind: 'too_deep', value } : { kind: 'json', value };
}

/**
 * A request body's bytes, with a size limit (checked on Content-Length before reading, and while
 * reading). Past the limit the rest is not collected, and the stream is left open for `refuse`. What is
 * held is taken from `lease` first: the declared length before anything is allocated, else each chunk
 * as it arrives.
 */
export function readBodyBytes(req: IncomingMessage, maxBytes: number, lease: BodyLease): Promise<BytesResult> {
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
    const stop = (result: BytesResult) => {
      req.off('data', collect).off('end', done);
      resolve(result);
    };
    const collect = (chunk: Buffer) => {
      if (size + chunk.length > maxBytes || (whole && size + chunk.length > whole.length)) return stop({ kind: 'too_large' });
      if (whole) chunk.copy(whole, size);
      else if (lease.take(chunk.length)) chunks.push(chunk);
      else return stop({ kind: 'busy' });
      size += chunk.length;
    };
    const done = () => resolve(size === 0 ? { kind: 'none' } : { kind: 'bytes', bytes: whole ? whole.subarray(0, size) : Buffer.concat(chunks, size) });
    req.on('data', collect).once('end', done);
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
