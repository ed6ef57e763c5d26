import { describe, expect, it } from '@jest/globals';
import type { IncomingMessage } from 'node:http';
import { clearReaching, cookieSentTwice, readCookie } from '../../src/identity/oauth/session-cookie.js';

const request = (cookie: string) => ({ headers: { cookie } }) as IncomingMessage;

describe('the console session cookie planted by another page on this host (issue 37, round three)', () => {
  it('reads none of two cookies of one name, and says they were sent twice', () => {
    const twice = request('oam_session=planted; other=1; oam_session=ours');
    expect(readCookie(twice, 'oam_session')).toBeUndefined();
    expect(cookieSentTwice(twice, 'oam_session')).toBe(true);
    expect(cookieSentTwice(request('oam_session=ours; oam_sessionx=1'), 'oam_session')).toBe(false);
  });

  it('clears a name at every path whose cookie a request to the path gets', () => {
    expect(clearReaching('oam_session', '/admin/me?x=1').map((value) => /Path=([^;]*)/.exec(value)![1])).toEqual(['/', '/admin', '/admin/', '/admin/me', '/admin/me/']);
    expect(clearReaching('oam_session', '/admin/me')[0]).toBe('oam_session=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Lax');
  });

  it('takes from the request path neither cookie attributes nor an unbounded list (a path is the client text)', () => {
    const forged = clearReaching('oam_session', '/admin/x;Max-Age=99999;Domain=evil.example/y');
    expect(forged.map((value) => /Path=([^;]*)/.exec(value)![1])).toEqual(['/', '/admin', '/admin/', '/admin/x', '/admin/x/']);
    expect(forged.every((value) => !/Domain|99999/.test(value))).toBe(true);
    expect(clearReaching('oam_session', '/a'.repeat(5000)).length).toBeLessThanOrEqual(33);
  });
});
