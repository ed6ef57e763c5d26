import { describe, expect, it } from '@jest/globals';
import { csvCell } from '../../src/admin/admin-views.js';
import { redact } from '../../src/audit/redaction.js';

describe('audit redaction and export escaping (T4.5, T4.6)', () => {
  it.each([
    ['an AWS key', 'key AKIAIOSFODNN7EXAMPLE here', 'AKIAIOSFODNN7EXAMPLE'],
    ['a GitHub token', 'ghp_0123456789abcdefghijABCDEFGHIJ0123', 'ghp_0123456789abcdefghij'],
    ['a fine-grained GitHub token', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnop', 'github_pat_11ABCDEFG'],
    ['a JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_def-ghi', 'eyJzdWIiOiIxIn0'],
    ['a bearer token', 'Authorization: Bearer abcdefghijklmnop', 'abcdefghijklmnop'],
    ['a password assignment', 'password=hunter2 next', 'hunter2'],
    ['a URL password', 'postgres://app:s3cret@db:5432/x', 's3cret'],
    ['a private key', '-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----', 'MIIEabc'],
  ])('masks %s', (_name, text, secret) => {
    expect(JSON.stringify(redact({ nested: [text] }))).not.toContain(secret);
  });

  it('masks configured secret values whatever their shape, and cuts long strings', () => {
    expect(redact('the token is plain-text-secret-value', ['plain-text-secret-value'])).toBe('the token is [REDACTED]');
    expect((redact('x'.repeat(1024 * 1024)) as string).length).toBeLessThan(9000);
  });

  it('quotes CSV cells and neutralises formula injection', () => {
    expect(csvCell('=HYPERLINK("http://evil")')).toBe(`"'=HYPERLINK(""http://evil"")"`);
    expect(csvCell('+1')).toBe(`"'+1"`);
    expect(csvCell('@SUM(A1)')).toBe(`"'@SUM(A1)"`);
    expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
    expect(csvCell({ a: 1 })).toBe('"{""a"":1}"');
    expect(csvCell(null)).toBe('""');
  });
});
