import { describe, expect, it } from '@jest/globals';
import { checkPushUrl, guardedLookup, isBlockedAddress } from '../../src/push/url-guard.js';

describe('push URL guard (SSRF)', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    // IPv4-mapped in hex and in full (issue 37): judged as the IPv4 address they carry.
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:a9fe:a9fe',
    // The other IPv6 forms that reach IPv4 (issue 37, also seen): blocked whatever they embed.
    '::127.0.0.1',
    '::8.8.8.8',
    '::ffff:0:808:808',
    '64:ff9b::808:808',
    '64:ff9b:1::808:808',
    '2002:808:808::1',
    'not-an-ip',
  ])('blocks %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808'])('lets %s through', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it('refuses everything when the allowlist is empty (push off)', () => {
    expect(checkPushUrl('https://example.com/hook', [])).toEqual({ problem: expect.stringMatching(/off/) });
  });

  it('takes only http(s) URLs under a prefix, without credentials', () => {
    const prefixes = ['https://hooks.example.com/'];
    expect(checkPushUrl('https://hooks.example.com/a', prefixes)).toMatchObject({ target: { listedAddresses: [] } });
    expect(checkPushUrl('https://hooks.example.com.evil.test/a', prefixes)).toEqual({ problem: expect.stringMatching(/not under/) });
    expect(checkPushUrl('https://user:pw@hooks.example.com/a', ['https://'])).toEqual({ problem: expect.stringMatching(/credentials/) });
    expect(checkPushUrl('ftp://hooks.example.com/a', ['ftp://'])).toEqual({ problem: expect.stringMatching(/http/) });
    expect(checkPushUrl('not a url', prefixes)).toEqual({ problem: expect.stringMatching(/not a URL/) });
  });

  it('refuses a blocked IP literal unless a matching prefix names that address', () => {
    expect(checkPushUrl('http://169.254.169.254/latest', ['http://'])).toEqual({ problem: expect.stringMatching(/169\.254\.169\.254/) });
    expect(checkPushUrl('http://[::1]:8080/x', ['http://'])).toEqual({ problem: expect.stringMatching(/::1/) });
    expect(checkPushUrl('http://[64:ff9b::7f00:1]:8080/x', ['http://'])).toEqual({ problem: expect.stringMatching(/64:ff9b::7f00:1/) });
    expect(checkPushUrl('http://[::ffff:127.0.0.1]:8080/x', ['http://'])).toEqual({ problem: expect.stringMatching(/::ffff:7f00:1/) });
    expect(checkPushUrl('http://127.0.0.1:8080/x', ['http://127.0.0.1:8080/'])).toMatchObject({ target: { listedAddresses: ['127.0.0.1'] } });
    // Listing one loopback port does not open another address.
    expect(checkPushUrl('http://127.0.0.2:8080/x', ['http://127.0.0.1:8080/', 'http://'])).toEqual({ problem: expect.stringMatching(/127\.0\.0\.2/) });
  });

  it('refuses, at lookup time, a name that resolves only to blocked addresses', async () => {
    const lookup = guardedLookup([]);
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => lookup('localhost', {}, (failure) => resolve(failure)));
    expect(error).toMatchObject({ code: 'EPUSHBLOCKED', message: expect.stringMatching(/resolves only to loopback/) });
    const listed = guardedLookup(['127.0.0.1', '::1']);
    const address = await new Promise<string>((resolve) => listed('localhost', {}, (_error, value) => resolve(value as string)));
    expect(['127.0.0.1', '::1']).toContain(address);
  });
});
