import { createServer } from 'node:net';

/**
 * Binds and releases `host:port` before the application starts, so a port in use is reported (by
 * its errno, see startup-error.ts) before the worker claims a Task it would then abandon on exit.
 */
export function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  const probe = createServer();
  return new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
