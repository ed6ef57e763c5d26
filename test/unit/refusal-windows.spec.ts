import { describe, expect, it } from '@jest/globals';
import { RefusalWindows } from '../../src/triggers/refusal-windows.js';

const T0 = Date.parse('2026-12-06T06:00:00.000Z');

/** Issue 38: refused deliveries are counted per trigger and client address, and audited per trigger in summaries. */
describe('RefusalWindows', () => {
  it('lets a client be refused perMinute times a minute per trigger, then says how long it waits', () => {
    const windows = new RefusalWindows(3);
    for (let n = 0; n < 3; n++) {
      expect(windows.wait('t1', '10.0.0.1', T0 + n)).toBe(0);
      windows.note('t1', '10.0.0.1', 401, true, T0 + n);
    }
    expect(windows.wait('t1', '10.0.0.1', T0 + 1_500)).toBe(59);
    expect(windows.wait('t1', '10.0.0.1', T0 + 59_999)).toBe(1);
    // Another address, and the same address on another trigger, are counted apart.
    expect(windows.wait('t1', '10.0.0.2', T0 + 1_500)).toBe(0);
    expect(windows.wait('t2', '10.0.0.1', T0 + 1_500)).toBe(0);
    // A 429 is not the client's fault: it does not count toward waiting.
    const fresh = new RefusalWindows(1);
    fresh.note('t1', '10.0.0.1', 429, false, T0);
    expect(fresh.wait('t1', '10.0.0.1', T0)).toBe(0);
    // A new minute starts afresh.
    expect(windows.wait('t1', '10.0.0.1', T0 + 60_000)).toBe(0);
  });

  it('audits a trigger’s first perMinute refusals one by one and the rest in one summary when the minute ends', () => {
    const windows = new RefusalWindows(2);
    const alone: boolean[] = [];
    for (let n = 0; n < 500; n++) {
      const status = n % 5 === 0 ? 413 : n < 10 ? 401 : 429;
      const { alone: one, ended } = windows.note('t1', `10.0.${n % 7}.1`, status, status !== 429, T0 + n);
      alone.push(one);
      expect(ended).toEqual([]);
    }
    expect(alone.filter(Boolean)).toHaveLength(2);
    expect(windows.sweep(T0 + 59_999)).toEqual([]);
    const [summary, ...more] = windows.sweep(T0 + 60_000);
    expect(more).toEqual([]);
    expect(summary).toEqual({
      trigger: 't1',
      count: 498,
      statuses: { 401: 7, 413: 99, 429: 392 },
      addresses: 7,
      from: '2026-12-06T06:00:00.000Z',
      to: '2026-12-06T06:01:00.000Z',
    });
    // Said once: the window is gone.
    expect(windows.sweep(T0 + 120_000)).toEqual([]);
  });

  it('gives an ended window’s summary with the next refusal, and every held one at shutdown', () => {
    const windows = new RefusalWindows(1);
    windows.note('t1', 'a', 401, true, T0);
    windows.note('t1', 'a', 401, true, T0 + 1);
    windows.note('t2', 'a', 401, true, T0);
    windows.note('t2', 'b', 404, true, T0 + 2);
    const next = windows.note('t1', 'a', 401, true, T0 + 60_000);
    expect(next).toEqual({ alone: true, ended: [expect.objectContaining({ trigger: 't1', count: 1 })] });
    expect(windows.sweep(Infinity)).toEqual([expect.objectContaining({ trigger: 't2', count: 1, statuses: { 404: 1 }, addresses: 1 })]);
  });

  it('holds at most 10 000 keys: the oldest window goes first, its summary said', () => {
    const windows = new RefusalWindows(1);
    windows.note('first', 'a', 401, true, T0);
    windows.note('first', 'a', 401, true, T0);
    let dropped: unknown[] = [];
    for (let n = 0; n < 10_000; n++) dropped = [...dropped, ...windows.note(`t${n}`, 'a', 401, true, T0 + 1).ended];
    expect(dropped).toEqual([expect.objectContaining({ trigger: 'first', count: 1 })]);
    // Its client window went with it: the client is heard again.
    expect(windows.wait('first', 'a', T0 + 1)).toBe(0);
  });
  it('tells apart at most 100 000 addresses across all held windows, and counts afresh once they are said', () => {
    const windows = new RefusalWindows(1);
    // 101 triggers each refused from 1 000 addresses in one minute: every window's own cap is 1 000.
    for (let t = 0; t < 101; t++) for (let a = 0; a < 1_000; a++) windows.note(`t${t}`, `10.${t}.${a >> 8}.${a & 255}`, 401, true, T0);
    const summaries = windows.sweep(Infinity);
    expect(summaries).toHaveLength(101);
    expect(summaries.reduce((sum, summary) => sum + summary.addresses, 0)).toBe(100_000);
    expect(summaries.every((summary) => summary.count === 999)).toBe(true);
    // The said windows gave their addresses back.
    windows.note('again', 'a', 401, true, T0 + 60_000);
    windows.note('again', 'b', 401, true, T0 + 60_000);
    expect(windows.sweep(Infinity)).toEqual([expect.objectContaining({ trigger: 'again', count: 1, addresses: 1 })]);
  });
});
