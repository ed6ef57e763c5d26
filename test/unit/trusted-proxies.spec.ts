import { describe, expect, it } from '@jest/globals';
import { TrustedProxies } from '../../src/identity/trusted-proxies.js';

describe('trusted proxy addresses (T2.4, T2.5)', () => {
  const proxies = new TrustedProxies(['127.0.0.0/8', '10.1.0.0/16', '::1/128', '2001:db8::/32']);

  it.each([
    ['127.0.0.1', true],
    ['::ffff:127.0.0.1', true],
    ['::1', true],
    ['::ffff:10.1.2.3', true],
    ['10.1.2.3', true],
    ['10.2.0.1', false],
    ['fe80::1%eth0', false],
    ['2001:db8::1', true],
    ['2001:db9::1', false],
    ['', false],
    ['not-an-ip', false],
  ])('peer %s trusted: %s', (peer, trusted) => {
    expect(proxies.trusts(peer)).toBe(trusted);
  });

  it('takes the right-most untrusted X-Forwarded-For hop only behind a trusted peer', () => {
    expect(proxies.clientAddress('127.0.0.1', '203.0.113.9, 198.51.100.4, 10.1.0.5')).toBe('198.51.100.4');
    expect(proxies.clientAddress('198.51.100.77', '127.0.0.1')).toBe('198.51.100.77');
    expect(proxies.clientAddress('127.0.0.1', undefined)).toBe('127.0.0.1');
  });

  it('stores only IP addresses as the source: a hop that is not one ends the walk at the peer', () => {
    expect(proxies.clientAddress('127.0.0.1', '<script>alert(1)</script>, 10.1.0.5')).toBe('127.0.0.1');
    expect(proxies.clientAddress('127.0.0.1', '203.0.113.9, =cmd|x')).toBe('127.0.0.1');
    expect(proxies.clientAddress('127.0.0.1', 'unknown')).toBe('127.0.0.1');
    expect(proxies.clientAddress('127.0.0.1', '2001:db9::7')).toBe('2001:db9::7');
  });
});
