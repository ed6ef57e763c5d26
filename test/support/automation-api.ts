import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A JSON answer of the admin API: its status, headers and parsed body. */
export interface ApiReply<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** The admin REST API as one user (`identity`: proxy headers), JSON in and out. */
export const adminApi =
  (base: string, identity: Record<string, string>) =>
  async <T = any>(method: string, path: string, body?: unknown): Promise<ApiReply<T>> => {
    const res = await fetch(`${base}/admin/${path}`, {
      method,
      headers: { ...identity, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };

/**
 * A webhook receiver on 127.0.0.1: every POST it got (path, headers, raw body and the status it answered),
 * 200; with `failFirst`, 500 to the first POST of each path, as a sender's outage that a retry gets past.
 */
export async function webhookReceiver({ failFirst = false } = {}) {
  const received: { path: string; headers: IncomingHttpHeaders; body: string; status: number }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      const status = failFirst && !received.some((entry) => entry.path === path) ? 500 : 200;
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
