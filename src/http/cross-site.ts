import type { IncomingMessage } from 'node:http';
import { printable, type EdgeRefusal } from './host-origin-guard.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const ADMIN_PATH = /^\/admin(?:[/?]|$)/i;

/**
 * Cross-site request forgery on admin routes that change state (POST, DELETE). A bearer token cannot
 * be sent by another site, but with `proxy_headers`/`proxy_jwt` the SSO proxy authenticates with its
 * own cookie, which a browser attaches to a cross-site form POST too. A browser says where a request
 * comes from: `Sec-Fetch-Site` (every current browser), else `Origin` (sent on every POST), which must
 * then be this very origin. A request with neither is not from a browser page, and passes.
 */
export function crossSiteRefusal(req: IncomingMessage): EdgeRefusal | null {
  if (SAFE_METHODS.has(req.method ?? '')) return null;
  if (!ADMIN_PATH.test(req.url ?? '')) return browserCrossSiteWithoutOrigin(req);
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined) {
    return site === 'same-origin' || site === 'none' ? null : { status: 403, reason: `cross-site admin request refused (Sec-Fetch-Site: ${printable(site)})` };
  }
  const origin = req.headers.origin;
  if (origin === undefined) return null;
  const host = req.headers.host;
  const sameOrigin = host !== undefined && (origin === `http://${host}` || origin === `https://${host}`);
  return sameOrigin ? null : { status: 403, reason: `cross-site admin request refused (Origin: ${printable(origin)})` };
}

/**
 * Every other route that acts on a POST or DELETE (Chat, A2A, MCP) takes cross-origin calls from the
 * origins of `server.allowed_origins`, which the Origin check decides. A browser that says the request
 * is cross-site (or same-site: another origin) but sends no Origin gives that check nothing to decide
 * on, so its request is refused rather than let through; without Sec-Fetch-Site it is no browser's.
 */
function browserCrossSiteWithoutOrigin(req: IncomingMessage): EdgeRefusal | null {
  const site = req.headers['sec-fetch-site'];
  if (site === undefined || req.headers.origin !== undefined || site === 'same-origin' || site === 'none') return null;
  return { status: 403, reason: `cross-site request without Origin refused (Sec-Fetch-Site: ${printable(site)})` };
}
