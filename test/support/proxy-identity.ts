/** What a trusted SSO proxy (auth.mode proxy_headers) on loopback sends, for suites with several users. */
export const ADMIN_GROUP = 'platform-admins';

/** The identity headers the proxy adds for `user`. */
export const as = (user: string, groups = 'dev') => ({ 'X-Forwarded-User': user, 'X-Forwarded-Groups': groups });

export const ADMIN = as('carol@example.com', `dev, ${ADMIN_GROUP}`);

/** The auth section of a service behind that proxy; it names the email header, so the fallback cases are tested. */
export const PROXY_AUTH = { mode: 'proxy_headers', trusted_proxies: ['127.0.0.1/32', '::1/128'], admin_groups: [ADMIN_GROUP], email_header: 'X-Forwarded-Email' };
