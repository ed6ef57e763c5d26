import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthInfo, McpHttpHandler } from '@modelcontextprotocol/server';

/**
 * Serves one request with the SDK's web-standard handler, handing it the parsed body (its documented
 * fast path) instead of a Request that carries the body again. The response is written back as the
 * SDK's own `toNodeHandler` does: status and headers, then the body with backpressure; a client that
 * goes away aborts the exchange (request-scoped cancellation).
 */
export async function serveParsed(handler: McpHttpHandler, req: IncomingMessage, res: ServerResponse, options: { authInfo: AuthInfo; parsedBody: unknown }): Promise<void> {
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
