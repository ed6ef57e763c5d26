import type { IncomingMessage } from 'node:http';

/** Longest identity header value accepted (bytes, after UTF-8 decoding). */
export const MAX_IDENTITY_HEADER_BYTES = 256;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * What no identity (user, email, group) may hold, whichever way it arrives (a proxy header, a signed
 * assertion, an OAuth token): C0 controls and DEL (a line break forges a log line or a header, ESC
 * drives a terminal) and bidirectional marks, overrides and isolates (U+202E shows `eve` reversed).
 * An identity is shown in logs, the console and other servers' headers, and must read as itself.
 */
const NOT_IN_AN_IDENTITY = /[\u0000-\u001f\u007f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** Why `value` cannot name anyone, or null. */
export const identityValueProblem = (value: string): string | null => (NOT_IN_AN_IDENTITY.test(value) ? 'contains a control or bidirectional character' : null);

/**
 * The identity claims of a verified token (proxy_jwt, oauth) held to the same rules as the headers:
 * the first that cannot name anyone, as `the <claim> claim …`, or null. Groups are checked whole.
 */
export function identityClaimsProblem(claims: { name: string; value: unknown }[]): string | null {
  for (const { name, value } of claims) {
    const values = Array.isArray(value) ? value : [value];
    const problem = values.map((item) => (typeof item === 'string' ? identityValueProblem(item) : null)).find((found) => found !== null);
    if (problem) return `the ${name} claim ${problem}`;
  }
  return null;
}

/** One identity header as read from the wire: absent, one value, or a reason to refuse the request. */
export type HeaderRead = { value: string } | { refused: string } | undefined;

/**
 * One identity header, refusing whatever is ambiguous: a header sent more than once (Node joins
 * repeats in `req.headers`, so the distinct values are read), a comma-joined value where one value is
 * expected (`list` headers such as groups may hold commas), line breaks, empty or overlong values, and
 * bytes that are not UTF-8. Node hands header values over as Latin-1; SSO proxies send UTF-8 names
 * (`山田`), so the bytes are decoded again as UTF-8.
 */
export function readIdentityHeader(req: IncomingMessage, name: string, { list = false, maxBytes = MAX_IDENTITY_HEADER_BYTES } = {}): HeaderRead {
  const values = req.headersDistinct[name.toLowerCase()];
  if (!values) return undefined;
  if (values.length !== 1) return { refused: `${name}: sent more than once` };
  const bytes = Buffer.from(values[0], 'latin1');
  if (bytes.length > maxBytes) return { refused: `${name}: longer than ${maxBytes} bytes` };
  let value: string;
  try {
    value = utf8.decode(bytes);
  } catch {
    return { refused: `${name}: not valid UTF-8` };
  }
  if (value.trim().length === 0) return { refused: `${name}: empty` };
  const problem = identityValueProblem(value);
  if (problem) return { refused: `${name}: ${problem}` };
  if (!list && value.includes(',')) return { refused: `${name}: must be one value, without commas` };
  return { value };
}

export const valueOf = (read: HeaderRead) => (read && 'value' in read ? read.value : undefined);

/** Names of `names` present on the request (repeated or not). */
export const presentHeaders = (req: IncomingMessage, names: readonly string[]) => names.filter((name) => req.headersDistinct[name.toLowerCase()] !== undefined);
