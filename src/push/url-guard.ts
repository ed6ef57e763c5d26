import { BlockList, isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { lookup as dnsLookup } from 'node:dns';

/** Addresses a push never reaches unless an allowlist prefix names them: loopback, link-local, private, and the like. */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  // Forms that reach IPv4 through a gateway or the stack itself, whatever they embed: IPv4-compatible
  // (RFC 4291), IPv4-translated (RFC 2765), NAT64 well-known and local-use (RFC 6052, 8215), 6to4
  // (RFC 3056). IPv4-mapped (`::ffff:0:0/96`) is judged as the IPv4 address it carries instead.
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv6');

const MAPPED = new BlockList();
MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

const unbracket = (host: string) => (host.startsWith('[') ? host.slice(1, -1) : host);

/** True for an address a push must not reach unlisted (IPv4-mapped IPv6, in any spelling, is judged as its IPv4). */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (MAPPED.check(address, 'ipv6')) return BLOCKED.check(mappedIpv4(address), 'ipv4');
  return BLOCKED.check(address, 'ipv6');
}

/** The IPv4 address an IPv4-mapped IPv6 address carries: WHATWG's URL writes any spelling as `::ffff:hhhh:hhhh`. */
function mappedIpv4(address: string): string {
  const [high, low] = new URL(`http://[${address}]`).hostname
    .slice(1, -1)
    .split(':')
    .slice(-2)
    .map((part) => parseInt(part, 16));
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

export interface PushTarget {
  url: URL;
  /** Addresses the matching allowlist prefixes name as IP literals: reachable even when blocked. */
  listedAddresses: string[];
}

/**
 * Whether `raw` may be pushed to: an http(s) URL without credentials that starts with one of the
 * allowlist `prefixes` (none: push is off), and whose host, when it is an IP literal, is not a blocked
 * address unless a matching prefix names it. A host name is checked again at connect time, on the
 * addresses it resolves to (`guardedLookup`). Returns the problem, in words, or the target.
 */
export function checkPushUrl(raw: string, prefixes: readonly string[]): { problem: string } | { target: PushTarget } {
  if (prefixes.length === 0) return { problem: 'push notifications are off on this service (a2a.push.allowed_urls is empty)' };
  if (!URL.canParse(raw)) return { problem: 'the url is not a URL' };
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'the url must be http:// or https://' };
  if (url.username || url.password) return { problem: 'the url must not hold credentials' };
  const matching = prefixes.filter((prefix) => url.href.startsWith(prefix));
  if (matching.length === 0) return { problem: 'the url is not under a2a.push.allowed_urls' };
  const listedAddresses = matching.map((prefix) => (URL.canParse(prefix) ? unbracket(new URL(prefix).hostname) : '')).filter((host) => isIP(host) !== 0);
  const host = unbracket(url.hostname);
  if (isIP(host) !== 0 && isBlockedAddress(host) && !listedAddresses.includes(host))
    return { problem: `the url names a loopback, link-local or private address (${host}) no allowlist prefix names` };
  return { target: { url, listedAddresses } };
}

/**
 * A DNS lookup for http.request that refuses blocked addresses: the check is made on the address the
 * socket then connects to, so a name that resolves differently a second time (DNS rebinding) gains nothing.
 */
export function guardedLookup(listed: readonly string[]): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const usable = addresses.filter((entry) => !isBlockedAddress(entry.address) || listed.includes(entry.address));
      if (usable.length === 0) {
        const refused = Object.assign(new Error(`${hostname} resolves only to loopback, link-local or private addresses (${addresses.map((entry) => entry.address).join(', ')})`), {
          code: 'EPUSHBLOCKED',
        });
        return callback(refused, '', 0);
      }
      if (options.all) return (callback as unknown as (error: null, addresses: typeof usable) => void)(null, usable);
      callback(null, usable[0].address, usable[0].family);
    });
  };
}
