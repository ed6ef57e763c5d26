/** Surfaces: MCP over HTTP, MCP over stdio, the Chat API, A2A, the admin REST API, the service itself, and work that starts by itself (issue 38). */
export type Transport = 'mcp-http' | 'stdio' | 'chat' | 'a2a' | 'http' | 'system' | 'schedule' | 'trigger';

/** Who is calling, as established by the edge (HTTP identity, or the OS user on stdio). */
export interface Caller {
  user: string;
  /** The caller's email, where the identity gives one (`auth.email_header`, `auth.email_claim`): an MCP server's `{email}` header. */
  email?: string | null;
  groups: string[];
  /** Admin rights: a group in `auth.admin_groups` (proxy modes) or the admin token (mode none). */
  admin: boolean;
  /** The surface the call came in on, as the audit log records it (`http` is the admin REST surface). */
  transport: Transport;
  /** The client's address: the TCP peer, or behind a trusted proxy the right-most untrusted hop. */
  address: string | null;
  /** MCP clientInfo name/version, when the client sent one. */
  client: string | null;
}

/** An email as an identity gives it (a header, a claim): one `local@domain` of at most 320 characters, else none. */
export function emailOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const email = value.trim();
  return email.length <= 320 && /^[^\s@]+@[^\s@]+$/.test(email) ? email : null;
}

/** The actor of events the service itself causes (worker state changes, crash recovery). */
export const SYSTEM_CALLER: Caller = { user: 'system', groups: [], admin: false, transport: 'system', address: null, client: null };

/** Why a request has no usable identity; the edge answers 401 and audits it. */
export interface IdentityRefusal {
  reason: string;
  /** Audit action: `auth.fail`, `auth.untrusted_identity_header` for a spoofing attempt, `auth.insufficient_scope` for a valid token short of the surface's scope. */
  action: 'auth.fail' | 'auth.untrusted_identity_header' | 'auth.insufficient_scope';
  address: string | null;
  /** 401 unless said otherwise: 403 for a valid token without the surface's scope, 503 when the issuer cannot be reached. */
  status?: 401 | 403 | 503;
  /** Headers the refusal carries: the `WWW-Authenticate` challenge of `auth.mode: oauth` (and Set-Cookie clearing an ambiguous session). */
  headers?: Record<string, string | string[]>;
  /** Who was refused, when the token named someone (403); otherwise the actor is anonymous. */
  caller?: Caller;
  /** What the audit log keeps of the token: its `jti`, or a SHA-256 prefix; never the token. */
  token?: string;
}

/** What identifying an HTTP request comes to: its caller, or why it has none. */
export type Identified = { caller: Caller } | { refusal: IdentityRefusal };

/** The actor of a request that has no identity (refused at the edge). */
export const anonymous = (address: string | null, transport: Transport = 'http'): Caller => ({ user: 'anonymous', groups: [], admin: false, transport, address, client: null });

/** The same caller, as seen on another surface: the HTTP identity is the same for /mcp, the Chat API and A2A. */
export const onSurface = (caller: Caller, transport: Transport): Caller => ({ ...caller, transport });
