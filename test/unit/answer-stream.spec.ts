import { describe, expect, it } from '@jest/globals';
import { AnswerStream } from '../../src/agent/answer-stream.js';
import type { RunEvent } from '../../src/agent/core/run-events.js';
import { applyDelta } from '../../src/events/answer-drafts.js';
import { decodeFromWire, encodeForWire, MAX_PAYLOAD_BYTES, splitForWire } from '../../src/events/wire-event.js';

type Delta = Extract<RunEvent, { type: 'answer_delta' }>;

function recorder() {
  const deltas: Delta[] = [];
  const stream = new AnswerStream('t1', { emit: async (event) => void deltas.push(event as Delta) });
  const shown = () => deltas.reduce((text, delta) => applyDelta(text, delta), '');
  return { stream, deltas, shown };
}

describe('AnswerStream: answer_delta offsets as the model writes', () => {
  it('appends chunk by chunk, leading whitespace dropped and trailing whitespace held back', async () => {
    const { stream, deltas, shown } = recorder();
    for (const chunk of ['\n\nHello', ' ', 'world', '\n']) await stream.chunk(chunk);
    expect(deltas.map(({ offset, text }) => [offset, text])).toEqual([
      [0, 'Hello'],
      [5, ' world'],
    ]);
    expect(shown()).toBe('Hello world');
  });

  it('never shows thinking: a <think> block is cut, even while its tag is half written', async () => {
    const { stream, shown, deltas } = recorder();
    for (const chunk of ['<thi', 'nk>secret', ' plan</think>', 'Answer']) await stream.chunk(chunk);
    expect(shown()).toBe('Answer');
    expect(JSON.stringify(deltas)).not.toMatch(/secret|think|<thi/);
  });

  it('a retried call that writes the same words again sends nothing twice', async () => {
    const { stream, deltas, shown } = recorder();
    await stream.chunk('Once upon');
    stream.restart();
    for (const chunk of ['Once', ' upon', ' a time']) await stream.chunk(chunk);
    expect(deltas.map(({ offset, text }) => [offset, text])).toEqual([
      [0, 'Once upon'],
      [9, ' a time'],
    ]);
    expect(shown()).toBe('Once upon a time');
  });

  it('a retried call that writes differently restarts at the first difference', async () => {
    const { stream, deltas, shown } = recorder();
    await stream.chunk('The cat');
    stream.restart();
    await stream.chunk('The dog');
    expect(deltas.at(-1)).toMatchObject({ offset: 4, text: 'dog' });
    expect(shown()).toBe('The dog');
  });

  it('a call that turned to tools takes its text back; a continuation after length appends', async () => {
    const { stream, deltas, shown } = recorder();
    await stream.chunk('Let me look');
    await stream.discard();
    expect(deltas.at(-1)).toMatchObject({ offset: 0, text: '' });
    await stream.chunk('Part one, ');
    stream.continueAfter('Part one, ');
    await stream.chunk('part two.');
    expect(shown()).toBe('Part one, part two.');
    expect(deltas.at(-1)).toMatchObject({ offset: 9, text: ' part two.' });
  });
});

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
