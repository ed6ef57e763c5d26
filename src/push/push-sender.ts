import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, isBlockedAddress, type PushTarget } from './url-guard.js';

/** What came back from one push: the HTTP status, or why no answer came. */
/** `refused`: the guard kept the connection from being made (not worth retrying). */
export type PushAttempt = { status: number } | { error: string; refused?: boolean };

const unbracket = (host: string) => (host.startsWith('[') ? host.slice(1, -1) : host);

/**
 * POSTs one push: the connection goes only to an address the guard allowed (an IP literal is checked
 * here, a name at its lookup), redirects are not followed, the answer's body is not read beyond its
 * status, and the whole exchange is bounded by `timeoutMs`.
 */
export function postPush(target: PushTarget, body: string, headers: Record<string, string>, timeoutMs: number): Promise<PushAttempt> {
  const host = unbracket(target.url.hostname);
  if (isIP(host) !== 0 && isBlockedAddress(host) && !target.listedAddresses.includes(host)) return Promise.resolve({ error: `blocked address ${host}`, refused: true });
  const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = send(target.url, {
      method: 'POST',
      headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      lookup: guardedLookup(target.listedAddresses),
      timeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    req.on('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.message, ...(error.code === 'EPUSHBLOCKED' ? { refused: true } : {}) }));
    req.end(body);
  });
}
