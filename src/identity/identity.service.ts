import { Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { userInfo } from 'node:os';
import { AppConfig } from '../config/app-config.js';
import type { Caller, IdentityRefusal } from './caller.js';
import { JwtAssertions } from './jwt-assertions.js';
import { TrustedProxies } from './trusted-proxies.js';

const MAX_HEADER_LENGTH = 256;

export type Identified = { caller: Caller } | { refusal: IdentityRefusal };

/**
 * Establishes the caller of an HTTP request per `auth.mode`, or on stdio the OS user that started
 * the process. Every failure is a refusal (401): there is no anonymous or implicit admin identity.
 */
@Injectable()
export class IdentityService {
  private readonly osUser = safeOsUser();
  private readonly proxies: TrustedProxies;
  private readonly jwt: JwtAssertions | null;

  constructor(private readonly config: AppConfig) {
    this.proxies = new TrustedProxies(config.auth.trustedProxies);
    this.jwt = config.auth.mode === 'proxy_jwt' ? new JwtAssertions(config.auth) : null;
  }

  async forHttp(req: IncomingMessage): Promise<Identified> {
    const peer = req.socket.remoteAddress ?? '';
    switch (this.config.auth.mode) {
      case 'none': {
        const token = bearer(req);
        return { caller: this.caller('local', [], token !== null && token === this.config.auth.adminToken, peer) };
      }
      case 'proxy_headers':
        return this.fromProxyHeaders(req, peer);
      case 'proxy_jwt':
        return this.fromAssertion(req, peer);
    }
  }

  forStdio(): Caller {
    return { user: this.osUser, groups: [], admin: false, transport: 'stdio', address: null, client: null };
  }

  private fromProxyHeaders(req: IncomingMessage, peer: string): Identified {
    const { userHeader, emailHeader, groupsHeader } = this.config.auth;
    const identityHeaders = [userHeader, emailHeader, groupsHeader].map((name) => name.toLowerCase());
    if (!this.proxies.trusts(peer)) {
      const spoofed = identityHeaders.some((name) => req.headers[name] !== undefined);
      return refuse(spoofed ? 'identity headers from an untrusted peer' : 'not from a trusted proxy', peer, spoofed ? 'auth.untrusted_identity_header' : 'auth.fail');
    }
    const address = this.proxies.clientAddress(peer, single(req, 'x-forwarded-for') ?? undefined);
    const user = single(req, userHeader) ?? single(req, emailHeader);
    if (user === undefined || user === null) return refuse('the trusted proxy sent no identity', address);
    if (!cleanValue(user)) return refuse(`${userHeader}: must be one value without commas or line breaks, at most ${MAX_HEADER_LENGTH} bytes`, address);
    const groupsValue = single(req, groupsHeader);
    if (groupsValue === null) return refuse(`${groupsHeader}: sent more than once`, address);
    const groups = (groupsValue ?? '').split(',').map((group) => group.trim()).filter(Boolean);
    return { caller: this.caller(user, groups, this.isAdmin(groups), address) };
  }

  private async fromAssertion(req: IncomingMessage, peer: string): Promise<Identified> {
    const token = single(req, this.config.auth.jwtHeader);
    if (!token) return refuse(`no ${this.config.auth.jwtHeader} assertion`, peer);
    const verified = await this.jwt!.verify(token);
    if ('error' in verified) return refuse(`invalid assertion: ${verified.error}`, peer);
    return { caller: this.caller(verified.user, verified.groups, this.isAdmin(verified.groups), peer) };
  }

  private isAdmin(groups: string[]): boolean {
    return groups.some((group) => this.config.auth.adminGroups.includes(group));
  }

  private caller(user: string, groups: string[], admin: boolean, address: string): Caller {
    return { user, groups, admin, transport: 'http', address: address || null, client: null };
  }
}

const refuse = (reason: string, address: string, action: IdentityRefusal['action'] = 'auth.fail'): Identified => ({
  refusal: { reason, action, address: address || null },
});

/** The header's single value; null when it was sent more than once (a proxy that appends, not sets). */
function single(req: IncomingMessage, name: string): string | null | undefined {
  const values = req.headersDistinct[name.toLowerCase()];
  if (!values) return undefined;
  return values.length === 1 ? values[0] : null;
}

const cleanValue = (value: string) => value.length > 0 && Buffer.byteLength(value) <= MAX_HEADER_LENGTH && !/[,\r\n]/.test(value);

function bearer(req: IncomingMessage): string | null {
  const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
  return match ? match[1] : null;
}

function safeOsUser(): string {
  try {
    return userInfo().username;
  } catch {
    return `uid:${process.getuid?.() ?? 'unknown'}`;
  }
}
