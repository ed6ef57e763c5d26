import type { AgentConfig } from '../config/agent-config.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

const hostnameOf = (hostHeader: string) => {
  try {
    return new URL(`http://${hostHeader}`).hostname;
  } catch {
    return null;
  }
};

export const isLoopbackHost = (host: string) => LOOPBACK_HOSTS.has(host);

/**
 * Origin and Host checks against DNS rebinding and cross-site browser requests (MCP Streamable HTTP
 * §Security). Requests without an Origin (non-browser clients) pass; a browser Origin must be a
 * loopback origin or one of `server.allowed_origins`. When the service listens on loopback, the Host
 * header must name a loopback host (or an allowed origin's host).
 */
export class HttpRequestGuard {
  private readonly allowedOrigins: Set<string>;
  private readonly allowedHosts: Set<string>;
  private readonly checkHost: boolean;

  constructor(server: AgentConfig['server']) {
    this.allowedOrigins = new Set(server.allowedOrigins.map((origin) => new URL(origin).origin));
    this.allowedHosts = new Set([...LOOPBACK_HOSTS, ...[...this.allowedOrigins].map((origin) => new URL(origin).hostname)]);
    this.checkHost = isLoopbackHost(server.host);
  }

  /** Returns why the request is refused, or null when it may proceed. */
  refusal(origin: string | undefined, host: string | undefined): string | null {
    if (origin !== undefined && !this.originAllowed(origin)) return `Origin not allowed: ${origin}`;
    if (this.checkHost) {
      const hostname = host ? hostnameOf(host) : null;
      if (!hostname || !this.allowedHosts.has(hostname)) return `Host not allowed: ${host ?? '(none)'}`;
    }
    return null;
  }

  private originAllowed(origin: string): boolean {
    if (this.allowedOrigins.has(origin)) return true;
    try {
      const url = new URL(origin);
      return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname);
    } catch {
      return false;
    }
  }
}

/** Room for the largest image payload as Base64 (4/3 of the bytes) plus the rest of the request. */
export const maxRequestBodyBytes = (images: AgentConfig['mcp']['images']) =>
  Math.ceil(images.maxTotalBytes / 3) * 4 + 1024 * 1024;
