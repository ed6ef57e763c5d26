import { describe, expect, it } from '@jest/globals';
import { CallsInFlight, type Root } from '../../src/mcp-client/calls-in-flight.js';

const roots: Root[] = [{ uri: 'file:///w/a', name: 'session workspace' }];

describe('CallsInFlight', () => {
  it('ends a call on its cancel while the server is still being told its roots (a notification whose send never completes)', async () => {
    // A Streamable HTTP server that accepts the POST of notifications/roots/list_changed and never answers it.
    const calls = new CallsInFlight<{ roots: Root[] }>((given) => (given === roots ? new Promise<void>(() => undefined) : Promise.resolve()));
    const controller = new AbortController();
    let worked = false;
    const call = calls.run({ roots }, controller.signal, async () => {
      worked = true;
      return 'done';
    });
    controller.abort(new Error('cancelled by the person'));
    await expect(call).rejects.toThrow('cancelled by the person');
    expect(worked).toBe(false);
    // The cancelled call left: the next call under other roots is told them instead of waiting behind it.
    const other = [{ uri: 'file:///w/b', name: 'session workspace' }];
    await expect(calls.run({ roots: other }, new AbortController().signal, async () => 'ok')).resolves.toBe('ok');
  });
});
