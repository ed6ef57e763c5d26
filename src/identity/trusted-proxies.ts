import { BlockList, isIP, isIPv6 } from 'node:net';
import { parseCidr } from '../config/cidr.js';

/**
 * The configured SSO proxy addresses. Trust is decided from the TCP peer only, never from
 * X-Forwarded-For; net.BlockList matches IPv4-mapped IPv6 peers (`::ffff:127.0.0.1`) correctly.
 */
export class TrustedProxies {
  private readonly list = new BlockList();

  constructor(entries: string[]) {
    for (const entry of entries) {
      const cidr = parseCidr(entry);
      if (cidr) this.list.addSubnet(cidr.address, cidr.prefix, cidr.family);
    }
  }

  trusts(address: string | undefined): boolean {
    if (!address) return false;
    const bare = address.split('%')[0];
    try {
      return this.list.check(bare, isIPv6(bare) ? 'ipv6' : 'ipv4');
    } catch {
      return false;
    }
  }

  /**
   * The client behind a trusted peer: the right-most X-Forwarded-For hop that is not a trusted proxy.
   * Only an IP address is taken (the audit log stores it as the source): a hop that is not one ends
   * the walk at the peer, the last address known for certain.
   */
  clientAddress(peer: string, forwardedFor: string | undefined): string {
    if (!forwardedFor || !this.trusts(peer)) return peer;
    const hops = forwardedFor
      .split(',')
      .map((hop) => hop.trim())
      .filter(Boolean);
    for (let index = hops.length - 1; index >= 0; index--) {
      if (isIP(hops[index]) === 0) return peer;
      if (!this.trusts(hops[index])) return hops[index];
    }
    return peer;
  }
}
