import { Injectable, Optional } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { userInfo } from 'node:os';
import { AppConfig } from '../config/app-config.js';
import { emailOf, type Caller, type Identified, type IdentityRefusal } from './caller.js';
import { presentHeaders, readIdentityHeader, valueOf } from './identity-headers.js';
import { JwtAssertions } from './jwt-assertions.js';
import { BearerAdmission } from './oauth/bearer-admission.js';
import type { Surface } from './oauth/oauth-surfaces.js';
import { TrustedProxies } from './trusted-proxies.js';

/** A groups list, and a signed assertion, are longer than a name. */
const MAX_GROUPS_HEADER_BYTES = 4096;
const MAX_ASSERTION_BYTES = 16 * 1024;

export type { Identified };

/**
 * Establishes the caller of an HTTP request per `auth.mode`, or on stdio the OS user that started
 * the process (also the caller of HTTP requests with `auth.mode: none`). Every failure is a refusal (401): there is no anonymous or implicit admin identity.
 */
@Injectable()
export class IdentityService {
  private readonly osUser = safeOsUser();
  private readonly proxies: TrustedProxies;
  private readonly jwt: JwtAssertions | null;

  /** `bearer` exists in `auth.mode: oauth` (OAuthModule provides it with the issuer's metadata, on the HTTP service only). */
  constructor(
    private readonly config: AppConfig,
    @Optional() private readonly bearer?: BearerAdmission,
  ) {
    this.proxies = new TrustedProxies(config.auth.trustedProxies);
    this.jwt = config.auth.mode === 'proxy_jwt' ? new JwtAssertions(config.auth) : null;
  }

  /** `surface` matters in `auth.mode: oauth` only, where each surface has its scope. */
  async forHttp(req: IncomingMessage, surface: Surface = 'http'): Promise<Identified> {
    const peer = req.socket.remoteAddress ?? '';
    switch (this.config.auth.mode) {
      case 'none': {
        // One local user: HTTP on loopback is the same owner as stdio (the OS user running the service),
        // so a Task created over one transport is found over the other on the same database.
        const token = bearer(req);
        return { caller: this.caller(this.osUser, [], isAdminToken(token, this.config.auth.adminToken), peer) };
      }
      case 'proxy_headers':
        return this.fromProxyHeaders(req, peer);
      case 'proxy_jwt':
        return this.fromAssertion(req, peer);
      case 'oauth':
        return this.bearer!.identify(req, surface);
    }
  }

  forStdio(): Caller {
    return { user: this.osUser, groups: [], admin: false, transport: 'stdio', address: null, client: null };
  }

  private fromProxyHeaders(req: IncomingMessage, peer: string): Identified {
    const { userHeader, emailHeader, groupsHeader } = this.config.auth;
    if (!this.proxies.trusts(peer)) {
      const spoofed = presentHeaders(req, [userHeader, emailHeader, groupsHeader].filter(Boolean)).length > 0;
      return refuse(spoofed ? 'identity headers from an untrusted peer' : 'not from a trusted proxy', peer, spoofed ? 'auth.untrusted_identity_header' : 'auth.fail');
    }
    const forwardedFor = req.headersDistinct['x-forwarded-for'];
    const address = this.proxies.clientAddress(peer, forwardedFor?.length === 1 ? forwardedFor[0] : undefined);
    // Every identity header is read (and may refuse) before any is used: a refused user header never
    // falls back to the email header, whatever that one says.
    const user = readIdentityHeader(req, userHeader);
    // The email header is a fallback only where the configuration names it (auth.email_header).
    const email = emailHeader ? readIdentityHeader(req, emailHeader) : undefined;
    const groups = readIdentityHeader(req, groupsHeader, { list: true, maxBytes: MAX_GROUPS_HEADER_BYTES });
    for (const read of [user, email, groups]) if (read && 'refused' in read) return refuse(read.refused, address);
    const name = valueOf(user) ?? valueOf(email);
    if (name === undefined) return refuse('the trusted proxy sent no identity', address);
    const groupList = (valueOf(groups) ?? '')
      .split(',')
      .map((group) => group.trim())
      .filter(Boolean);
    return { caller: { ...this.caller(name.trim(), groupList, this.isAdmin(groupList), address), email: emailOf(valueOf(email)) } };
  }

  private async fromAssertion(req: IncomingMessage, peer: string): Promise<Identified> {
    const header = this.config.auth.jwtHeader;
    const token = readIdentityHeader(req, header, { maxBytes: MAX_ASSERTION_BYTES });
    if (!token) return refuse(`no ${header} assertion`, peer);
    if ('refused' in token) return refuse(token.refused, peer);
    const verified = await this.jwt!.verify(token.value);
    if ('error' in verified) return refuse(`invalid assertion: ${verified.error}`, peer);
    return { caller: { ...this.caller(verified.user, verified.groups, this.isAdmin(verified.groups), peer), email: verified.email } };
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

/** The admin token check of mode none, in constant time (hashes first: timingSafeEqual wants equal lengths). */
function isAdminToken(token: string | null, adminToken: string): boolean {
  if (token === null || adminToken.length === 0) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(token), digest(adminToken));
}

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
