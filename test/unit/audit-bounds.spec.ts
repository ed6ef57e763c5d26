import { describe, expect, it } from '@jest/globals';
import { AUDIT_LIMITS, boundForAudit, CUT_KEY } from '../../src/audit/audit-bounds.js';
import { redact } from '../../src/audit/redaction.js';

const size = (value: unknown) => JSON.stringify(value).length;

describe('audit event size bounds', () => {
  it('keeps small details as they are', () => {
    const detail = { arguments: { request: 'fix it', images: [{ mime_type: 'image/png' }] }, reason: null, n: 3, ok: true };
    expect(boundForAudit(detail)).toEqual(detail);
  });

  it('cuts a long string, a long key, many entries and deep nesting, each with a marker saying what was cut', () => {
    expect(boundForAudit({ s: 'x'.repeat(25_000_000) })).toEqual({ s: `${'x'.repeat(AUDIT_LIMITS.stringChars)}…[cut: 25000000 chars]` });
    const [key] = Object.keys(boundForAudit({ ['k'.repeat(1_000_000)]: 1 }) as object);
    expect(key).toBe(`${'k'.repeat(AUDIT_LIMITS.keyChars)}…[cut: 1000000 chars]`);
    const array = boundForAudit(Array.from({ length: 1_000_000 }, (_, n) => n)) as unknown[];
    expect(array).toHaveLength(AUDIT_LIMITS.entries + 1);
    expect(array.at(-1)).toBe(`…[cut: ${1_000_000 - AUDIT_LIMITS.entries} of 1000000 entries]`);
    const object = boundForAudit(Object.fromEntries(Array.from({ length: 100 }, (_, n) => [`k${n}`, n]))) as Record<string, unknown>;
    expect(object[CUT_KEY]).toBe(`…[cut: ${100 - AUDIT_LIMITS.entries} of 100 entries]`);
    let deep: unknown = [];
    for (let n = 0; n < 100_000; n++) deep = [deep];
    expect(JSON.stringify(boundForAudit(deep))).toMatch(/nested deeper than 8 levels/);
  });

  it('bounds the whole detail, whatever its shape', () => {
    const wide = Object.fromEntries(Array.from({ length: 64 }, (_, n) => [`k${n}`, Array.from({ length: 64 }, () => 'y'.repeat(5000))]));
    expect(size(boundForAudit(wide))).toBeLessThan(AUDIT_LIMITS.totalChars * 2);
    expect(size(redact({ arguments: wide, reason: 'r'.repeat(1e6) }))).toBeLessThan(AUDIT_LIMITS.totalChars * 2);
  });

  it('masks a secret that straddles the cut whole', () => {
    const secret = 'plain-text-secret-value';
    const text = `${'a'.repeat(AUDIT_LIMITS.stringChars - 5)}${secret}`;
    expect(redact({ text }, [secret])).toEqual({ text: `${'a'.repeat(AUDIT_LIMITS.stringChars - 5)}[REDA…[cut: ${text.length} chars]` });
  });

  it('records image data by its length only', () => {
    expect(redact({ images: [{ data_base64: 'A'.repeat(4000) }] })).toEqual({ images: [{ data_base64: { base64_chars: 4000 } }] });
  });
});
