import type { IncomingMessage } from 'node:http';

/**
 * The console's session in `auth.mode: oauth`: the access token of the signed-in admin, in a cookie
 * the page's script cannot read (HttpOnly), sent only over HTTPS (Secure; browsers treat loopback as
 * secure) and only with requests from this site (SameSite=Strict), for the admin API only (Path).
 */
export const SESSION_COOKIE = 'oam_session';
/** The sign-in in progress (state, nonce, PKCE verifier): Lax, as it must come back with the issuer's redirect. */
export const SIGN_IN_COOKIE = 'oam_sign_in';

const MAX_COOKIE_HEADER_BYTES = 16 * 1024;

/** One cookie's value, or undefined when absent, sent twice, or in an oversized header. */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header || header.length > MAX_COOKIE_HEADER_BYTES) return undefined;
  const values = header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${name}=`))
    .map((pair) => pair.slice(name.length + 1));
  return values.length === 1 && values[0] !== '' ? values[0] : undefined;
}

export function setCookie(name: string, value: string, options: { path: string; maxAgeS: number; sameSite: 'Strict' | 'Lax' }): string {
  return `${name}=${value}; Path=${options.path}; Max-Age=${Math.max(0, Math.floor(options.maxAgeS))}; HttpOnly; Secure; SameSite=${options.sameSite}`;
}

export const clearCookie = (name: string, path: string) => setCookie(name, '', { path, maxAgeS: 0, sameSite: 'Lax' });
