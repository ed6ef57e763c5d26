import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeFilePool } from '../../src/workspace/file-pool-probe.js';

describe('the file thread pool probe of /readyz (issue 20, finding 2)', () => {
  it('says the pool is wedged while every pool thread is stuck in open(2), and fine once they are free', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oam-pool-'));
    const pool = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const fifos = Array.from({ length: pool }, (_, index) => join(dir, `p${index}`));
    execFileSync('mkfifo', fifos);
    try {
      await probeFilePool(dir, 500);
      // A blocking open of a FIFO's read end waits for a writer: this is what a read of one did on 05b3225.
      const stuck = fifos.map((fifo) => open(fifo, 'r'));
      await expect(probeFilePool(dir, 500)).rejects.toThrow(/file thread pool did not answer within 500 ms/);
      // Writers from another process (this one's pool is stuck) free the readers, and the pool with them.
      execFileSync('sh', ['-c', 'for f; do : > "$f"; done', 'sh', ...fifos]);
      await Promise.all((await Promise.all(stuck)).map((handle) => handle.close()));
      await probeFilePool(dir, 2000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
