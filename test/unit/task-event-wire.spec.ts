import { describe, expect, it } from '@jest/globals';
import { applyDelta } from '../../src/events/answer-drafts.js';
import { decodeFromWire, encodeForWire, MAX_PAYLOAD_BYTES, splitForWire } from '../../src/events/wire-event.js';

describe('task events on the wire (NOTIFY payloads)', () => {
  it('splits a long delta into consecutive ones that fit a notification', () => {
    const text = 'ü'.repeat(2500);
    const parts = splitForWire({ type: 'answer_delta', taskId: 't', offset: 10, text });
    expect(parts.map((part) => part.offset)).toEqual([10, 1010, 2010]);
    expect(parts.reduce((answer, part) => applyDelta(answer, part), 'x'.repeat(10))).toBe('x'.repeat(10) + text);
    for (const part of parts) expect(Buffer.byteLength(encodeForWire('origin', part))).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
  });

  it('sends a thin event when the whole one would not fit, and decodes only its own payloads', () => {
    const step = { taskId: 't', subtask: '', kind: 'command' as const, name: 'run', outcome: 'ok' as const, durationMs: 1, startedAt: '', detail: { output: 'x'.repeat(20_000) } };
    const payload = encodeForWire('me', { type: 'step', taskId: 't', step });
    expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
    expect(decodeFromWire(payload)).toEqual({ origin: 'me', event: { type: 'step', taskId: 't', step: { ...step, detail: {} } } });
    expect(decodeFromWire('not json')).toBeNull();
    expect(decodeFromWire('{"o":1}')).toBeNull();
  });
});
