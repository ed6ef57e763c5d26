import { describe, expect, it } from '@jest/globals';
import { echoableId, envelopeProblem } from '../../src/a2a/a2a-envelope.js';
import { instantOf } from '../../src/a2a/a2a-timestamp.js';

describe('A2A request checks ahead of the SDK (issue 43)', () => {
  it('envelopeProblem: JSON-RPC 2.0 request objects pass; a wrong version, no method, a bad id or a batch do not', () => {
    expect(envelopeProblem({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: {} })).toBeNull();
    expect(envelopeProblem({ jsonrpc: '2.0', method: 'GetTask' })).toBeNull();
    expect(envelopeProblem({ jsonrpc: '2.0', id: null, method: 'GetTask' })).toBeNull();
    expect(envelopeProblem({ jsonrpc: '2.0', id: 'x', method: 'GetTask' })).toBeNull();
    expect(envelopeProblem({ jsonrpc: 2, id: 1, method: 'GetTask' })).toBe('jsonrpc must be exactly "2.0"');
    expect(envelopeProblem({ jsonrpc: '2.0', id: 1, method: '' })).toBe('method must be a non-empty string');
    expect(envelopeProblem({ jsonrpc: '2.0', id: 1, method: ['GetTask'] })).toBe('method must be a non-empty string');
    for (const id of [1.5, {}, [], true]) expect(envelopeProblem({ jsonrpc: '2.0', id, method: 'GetTask' })).toBe('id must be a string, an integer or null');
    for (const body of [[], 'GetTask', 42, null]) expect(envelopeProblem(body)).toMatch(/one JSON-RPC request object/);
  });

  it('echoableId: a valid id, else null', () => {
    expect([echoableId({ id: 3 }), echoableId({ id: 'a' }), echoableId({ id: { bad: 1 } }), echoableId({ id: 2.5 }), echoableId([{ id: 1 }]), echoableId({})]).toEqual([
      3,
      'a',
      null,
      null,
      null,
      null,
    ]);
  });

  it('instantOf: RFC 3339 date-times as stored ISO instants, sub-milliseconds rounded up, offsets applied', () => {
    expect(instantOf('2026-03-12T10:00:00Z')).toBe('2026-03-12T10:00:00.000Z');
    expect(instantOf('2026-03-12t10:00:00.5z')).toBe('2026-03-12T10:00:00.500Z');
    expect(instantOf('2026-03-12T10:00:00.123000Z')).toBe('2026-03-12T10:00:00.123Z');
    expect(instantOf('2026-03-12T10:00:00.123000001Z')).toBe('2026-03-12T10:00:00.124Z');
    expect(instantOf('2026-03-12T11:30:00+01:30')).toBe('2026-03-12T10:00:00.000Z');
    expect(instantOf('2024-02-29T00:00:00Z')).toBe('2024-02-29T00:00:00.000Z');
    expect(instantOf('0000-01-01T00:00:00+01:00')).toBe('0000-01-01T00:00:00.000Z');
    expect(instantOf('9999-12-31T23:30:00-01:00')).toBe('9999-12-31T23:59:59.999Z');
  });

  it('instantOf refuses what Date.parse would take but is no RFC 3339 date-time', () => {
    for (const text of [
      '-1',
      '2024',
      '2026-03-12',
      'yesterday',
      '2026-03-12 10:00:00Z',
      '2026-03-12T10:00:00',
      '2025-02-29T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '2026-01-01T10:00:60Z',
      '',
    ]) {
      expect(() => instantOf(text)).toThrow(/^statusTimestampAfter: must be an RFC 3339 date-time/);
    }
  });
});
