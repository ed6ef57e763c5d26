import { stat } from 'node:fs/promises';

/** How long a trivial file operation may wait before the file thread pool counts as wedged. */
export const FILE_POOL_PROBE_MS = 2000;

/**
 * Rejects when a trivial file operation (a stat of `path`) does not finish within `timeoutMs`. Every
 * file operation of the process queues on libuv's few pool threads (UV_THREADPOOL_SIZE, 4 by default):
 * when they are all stuck, no Task can write a file, and readiness must say so.
 */
export async function probeFilePool(path: string, timeoutMs = FILE_POOL_PROBE_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the file thread pool did not answer within ${timeoutMs} ms (file operations are stuck)`)), timeoutMs);
  });
  try {
    await Promise.race([stat(path), stuck]);
  } finally {
    clearTimeout(timer);
  }
}
