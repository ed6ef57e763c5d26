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
/** How deep a path clearReaching clears at: beyond the admin API's deepest route, so a request path cannot make a long answer. */
const MAX_CLEARED_DEPTH = 16;

/** One cookie's value, or undefined when absent, sent twice, or in an oversized header. */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header || header.length > MAX_COOKIE_HEADER_BYTES) return undefined;
  const values = valuesOf(header, name);
  return values.length === 1 && values[0] !== '' ? values[0] : undefined;
}

/** Every value the header gives `name`, in order. */
const valuesOf = (header: string, name: string) =>
  header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${name}=`))
    .map((pair) => pair.slice(name.length + 1));

export function setCookie(name: string, value: string, options: { path: string; maxAgeS: number; sameSite: 'Strict' | 'Lax' }): string {
  return `${name}=${value}; Path=${options.path}; Max-Age=${Math.max(0, Math.floor(options.maxAgeS))}; HttpOnly; Secure; SameSite=${options.sameSite}`;
}

export const clearCookie = (name: string, path: string) => setCookie(name, '', { path, maxAgeS: 0, sameSite: 'Lax' });

/** Whether the request carries `name` more than once (readCookie then reads none). */
export function cookieSentTwice(req: IncomingMessage, name: string): boolean {
  return valuesOf(req.headers.cookie ?? '', name).length > 1;
}

/**
 * Set-Cookie values that expire `name` at every path a cookie sent with a request to `path` may have
 * been set for: `/` and each leading part, with and without its trailing slash. Cookies are not kept apart
 * by port: a page of another service on this host can plant one of ours at a wider or narrower path, and
 * two of a name are refused as ambiguous (readCookie), which would lock the person out; these clear them.
 * `except`: the path the response sets the cookie at itself (listed first, so a client that reads one cookie reads it).
 */
export function clearReaching(name: string, path: string, except?: string): string[] {
  // The path is the client's text: it ends at the first `;` (no attribute of its own reaches Set-Cookie; a cookie's
  // path cannot hold one) and counts at most MAX_CLEARED_DEPTH parts (the admin API's routes have five).
  const parts = path.split(/[?;]/)[0].split('/').filter(Boolean).slice(0, MAX_CLEARED_DEPTH);
  const paths = ['/', ...parts.flatMap((_, index) => [`/${parts.slice(0, index + 1).join('/')}`, `/${parts.slice(0, index + 1).join('/')}/`])];
  return paths.filter((at) => at !== except).map((at) => clearCookie(name, at));
}
