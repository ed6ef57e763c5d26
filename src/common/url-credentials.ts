/** The scheme and userinfo of a URL (`https://user:pass@`, `postgres://token@`): the credentials are the userinfo. */
export const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi;

/** `text` with the userinfo of every URL in it (`https://user:pass@host`, `https://token@host`) masked. */
export const redactUrlCredentials = (text: string) => text.replace(URL_USERINFO, '$1[REDACTED]@');
