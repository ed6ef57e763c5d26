import type { IncomingHttpHeaders } from 'node:http';
import { localhostAllowedHostnames, localhostAllowedOrigins, validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import type { AgentConfig } from '../config/agent-config.js';
import { cutText } from '../common/cut-text.js';

/** Why a request is refused before any route sees it, and the status that says so. */
export interface EdgeRefusal {
  status: 400 | 403 | 405;
  reason: string;
}

/**
 * `host [":" port]` and nothing else (RFC 9110 §7.2): a name or IPv4 address, or a bracketed IPv6
 * address. WHATWG URL parsing, which the SDK's validateHostHeader uses, would read `evil.com@127.0.0.1`
 * as user info plus a loopback host, and `127.0.0.1/x` as a path; neither is a Host.
 */
const HOST_FORM = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?$/;

/** How `server.host` appears as a URL hostname (IPv6 in brackets), to compare with the SDK's loopback list. */
const asUrlHostname = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host.toLowerCase());

/**
 * The Host and Origin checks for every route the service serves (MCP, admin REST and page, probes),
 * against DNS rebinding and cross-site browser requests (MCP Streamable HTTP §Security). The lists
 * and the parsing are the SDK's (`localhostAllowedHostnames`, `validateHostHeader`,
 * `validateOriginHeader`); what the SDK leaves open is closed here: a Host must be one well-formed
 * value, and a non-loopback Origin must be one of `server.allowed_origins` exactly (scheme and port
 * too, as the key names origins, not hostnames).
 */
export class HostOriginGuard {
  private readonly allowedOrigins: Set<string>;
  private readonly originHostnames: string[];
  private readonly hostnames: string[];
  /** Only a service listening on loopback knows which names reach it; behind a proxy, the proxy decides. */
  private readonly checkHost: boolean;

  constructor(server: AgentConfig['server']) {
    const loopback = localhostAllowedHostnames();
    this.allowedOrigins = new Set(server.allowedOrigins.map((origin) => new URL(origin).origin));
    const configured = [...this.allowedOrigins].map((origin) => new URL(origin).hostname);
    this.originHostnames = [...localhostAllowedOrigins(), ...configured];
    this.hostnames = [...loopback, ...configured];
    this.checkHost = loopback.includes(asUrlHostname(server.host));
  }

  /** Returns why the request is refused, or null when it may proceed. */
  refusal(headers: IncomingHttpHeaders, distinct: Record<string, string[] | undefined>): EdgeRefusal | null {
    const hosts = distinct.host ?? [];
    if (hosts.length > 1) return { status: 400, reason: 'Host header sent more than once' };
    const host = hosts[0];
    const form = host === undefined ? null : HOST_FORM.exec(host);
    if (host !== undefined && (!form || Number(form[1] ?? 0) > 65_535)) return { status: 400, reason: `malformed Host header: ${printable(host)}` };
    if (this.checkHost) {
      const checked = validateHostHeader(host, this.hostnames);
      if (!checked.ok) return { status: checked.errorCode === 'invalid_host' ? 403 : 400, reason: checked.message };
    } else if (host !== undefined && !URL.canParse(`http://${host}`)) {
      return { status: 400, reason: `malformed Host header: ${printable(host)}` };
    }
    if ((distinct.origin?.length ?? 0) > 1) return { status: 400, reason: 'Origin header sent more than once' };
    const origin = headers.origin;
    if (origin !== undefined) {
      const checked = validateOriginHeader(origin, this.originHostnames);
      if (!checked.ok) return { status: 403, reason: `Origin not allowed: ${printable(origin)}` };
      if (!localhostAllowedOrigins().includes(checked.hostname ?? '') && !this.allowedOrigins.has(new URL(origin).origin)) {
        return { status: 403, reason: `Origin not allowed: ${printable(origin)}` };
      }
    }
    return null;
  }
}

/** A header value fit for a message and the audit log: bounded, control characters escaped. */
export function printable(value: string): string {
  return JSON.stringify(cutText(value, 200)).slice(1, -1);
}
