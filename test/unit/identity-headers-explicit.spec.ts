import { describe, expect, it } from '@jest/globals';
import type { IncomingMessage } from 'node:http';
import { validateConfig } from '../../src/config/agent-config.js';
import { IdentityService } from '../../src/identity/identity.service.js';

/** A request from the trusted proxy on loopback with these headers (names in lower case, as node gives them). */
function fromProxy(headers: Record<string, string>): IncomingMessage {
  const distinct = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]]));
  const raw = Object.entries(headers).flat();
  return { headers, headersDistinct: distinct, rawHeaders: raw, socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
}

const service = (auth: Record<string, unknown> = {}) => new IdentityService(validateConfig({ auth: { mode: 'proxy_headers', trusted_proxies: ['127.0.0.1/32'], ...auth } }));

/** Issue 20, also seen: only the identity headers the configuration names are honoured. */
describe('identity headers are explicit in auth config', () => {
  it('by default honours the user header alone: an email header a client passes through names no one', async () => {
    const identity = service();
    expect(await identity.forHttp(fromProxy({ 'x-forwarded-email': 'mallory@example.com' }))).toMatchObject({ refusal: { reason: 'the trusted proxy sent no identity' } });
    expect(await identity.forHttp(fromProxy({ 'x-forwarded-user': 'alice@example.com', 'x-forwarded-email': 'mallory@example.com' }))).toMatchObject({
      caller: { user: 'alice@example.com', email: null },
    });
  });

  it('falls back to the email header only where auth.email_header names it', async () => {
    const identity = service({ email_header: 'X-Forwarded-Email' });
    expect(await identity.forHttp(fromProxy({ 'x-forwarded-email': 'bob@example.com' }))).toMatchObject({ caller: { user: 'bob@example.com', email: 'bob@example.com' } });
    // The email of a caller named by the user header ({email} of an MCP server's headers); a value that is no email is none.
    expect(await identity.forHttp(fromProxy({ 'x-forwarded-user': 'bob', 'x-forwarded-email': 'bob@example.com' }))).toMatchObject({
      caller: { user: 'bob', email: 'bob@example.com' },
    });
    expect(await identity.forHttp(fromProxy({ 'x-forwarded-user': 'bob', 'x-forwarded-email': 'bob' }))).toMatchObject({ caller: { user: 'bob', email: null } });
  });

  it('refuses a user or group header with a tab, DEL or a bidirectional override, the rules OAuth claims follow too (issue 37, S3)', async () => {
    const identity = service();
    // Node hands header values over as Latin-1: U+202E arrives as its UTF-8 bytes.
    const rlo = Buffer.from('eve\u202e', 'utf8').toString('latin1');
    const cases: Record<string, string>[] = [
      { 'x-forwarded-user': 'eve\tadmin' },
      { 'x-forwarded-user': 'eve\u007f' },
      { 'x-forwarded-user': rlo },
      { 'x-forwarded-user': 'eve', 'x-forwarded-groups': `dev,${rlo}` },
    ];
    for (const headers of cases) {
      expect(await identity.forHttp(fromProxy(headers))).toMatchObject({ refusal: { reason: expect.stringMatching(/contains a control or bidirectional character/) } });
    }
  });
});
