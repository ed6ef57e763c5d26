import { describe, expect, it } from '@jest/globals';
import { SAME_STOP_MS, terminationHandler } from '../../src/common/termination.js';

/** The handler with a clock the test moves, a shutdown the test finishes, and what it logged and exited with. */
function harness() {
  let time = 0;
  let finish!: () => void;
  const shutdowns: NodeJS.Signals[] = [];
  const lines: string[] = [];
  const exits: number[] = [];
  const handle = terminationHandler(
    (signal) => {
      shutdowns.push(signal);
      return new Promise<void>((done) => (finish = done));
    },
    { log: (line) => lines.push(line), exit: (code) => exits.push(code), now: () => time },
  );
  return { handle, shutdowns, lines, exits, finish: () => finish(), advance: (ms: number) => (time += ms) };
}

describe('stopping on SIGINT and SIGTERM', () => {
  it("takes npm's forwarded copy of a Ctrl-C as the same request: one drain, no forced exit", async () => {
    const stop = harness();
    stop.handle('SIGINT');
    stop.advance(5);
    stop.handle('SIGINT');
    expect(stop.shutdowns).toEqual(['SIGINT']);
    expect(stop.exits).toEqual([]);
    expect(stop.lines).toEqual([`SIGINT again within ${SAME_STOP_MS} ms: the same request to stop (still draining)`]);
    stop.finish();
    await new Promise(setImmediate);
    expect(stop.exits).toEqual([0]);
  });

  it('forces on a second signal after that, and says so', () => {
    const stop = harness();
    stop.handle('SIGINT');
    stop.advance(SAME_STOP_MS + 1);
    stop.handle('SIGINT');
    expect(stop.exits).toEqual([1]);
    expect(stop.lines.at(-1)).toBe('SIGINT again: forced stop, the running task is not waited for (it ends interrupted)');
  });

  it('names a different second signal as such (SIGTERM from a supervisor after a Ctrl-C)', () => {
    const stop = harness();
    stop.handle('SIGINT');
    stop.advance(SAME_STOP_MS + 1);
    stop.handle('SIGTERM');
    expect(stop.exits).toEqual([1]);
    expect(stop.lines.at(-1)).toBe('SIGTERM after SIGINT: forced stop, the running task is not waited for (it ends interrupted)');
  });

  it('exits 1 with the reason when the drain fails', async () => {
    const lines: string[] = [];
    const exits: number[] = [];
    terminationHandler(() => Promise.reject(new Error('database gone')), { log: (line) => lines.push(line), exit: (code) => exits.push(code) })('SIGTERM');
    await new Promise(setImmediate);
    expect(exits).toEqual([1]);
    expect(lines[0]).toMatch(/^shutdown failed: Error: database gone/);
  });
});
