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
    // Every other alternative of the patterns, each of which the one-scan pre-check must let through.
    ['a temporary AWS key', 'ASIAIOSFODNN7EXAMPLE', 'ASIAIOSFODNN7EXAMPLE'],
    ['a GitHub OAuth token', 'gho_0123456789abcdefghijABCDEFGHIJ0123', 'gho_0123456789abcdefghij'],
    ['a GitHub user token', 'ghu_0123456789abcdefghijABCDEFGHIJ0123', 'ghu_0123456789abcdefghij'],
    ['a GitHub server token', 'ghs_0123456789abcdefghijABCDEFGHIJ0123', 'ghs_0123456789abcdefghij'],
    ['a GitHub refresh token', 'ghr_0123456789abcdefghijABCDEFGHIJ0123', 'ghr_0123456789abcdefghij'],
    ['an API key', 'key sk-proj_0123456789abcdefghij', 'sk-proj_0123456789abcdefghij'],
    ['a basic credential', 'authorization: basic dXNlcjpwYXNzd29yZA==', 'dXNlcjpwYXNzd29yZA'],
    ['a URL token', 'https://ghtoken@github.example/x', 'ghtoken'],
    ['a passwd assignment', 'PASSWD: hunter2', 'hunter2'],
    ['a pwd assignment', 'pwd=hunter2', 'hunter2'],
    ['a secret assignment', 'secret = "hunter 2"', 'hunter 2'],
    ['a token assignment', 'Token:hunter2', 'hunter2'],
    ['an api_key assignment', 'api_key=hunter2', 'hunter2'],
    ['an api-key assignment', 'X-Api-Key: hunter2', 'hunter2'],
    ['an apikey assignment', 'apikey=hunter2', 'hunter2'],
    ['an access key assignment', 'access-key=hunter2', 'hunter2'],
    ['an access_key assignment', "access_key='hunter2'", 'hunter2'],
    // Key words at the end of a longer name, which a word boundary before the key word missed.
    ['a client_secret assignment', 'client_secret=hunter2', 'hunter2'],
    ['an environment token', 'GITHUB_TOKEN=hunter2', 'hunter2'],
    ['an AWS secret key', 'AWS_SECRET_ACCESS_KEY: hunter2', 'hunter2'],
    ['a DB password', 'db-password = hunter2', 'hunter2'],
    ['a command-line flag', 'mysql --password=hunter2', 'hunter2'],
    ['a hyphenated name', 'x-api-token: hunter2', 'hunter2'],
  ])('masks %s', (_name, text, secret) => {
    expect(JSON.stringify(redact({ nested: [text] }))).not.toContain(secret);
  });

  it('leaves names that only contain a key word before another word alone', () => {
    expect(redact('token_count: 5, tokens: 12, max_tokens=4096')).toBe('token_count: 5, tokens: 12, max_tokens=4096');
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
