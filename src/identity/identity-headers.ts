import type { IncomingMessage } from 'node:http';

/** Longest identity header value accepted (bytes, after UTF-8 decoding). */
export const MAX_IDENTITY_HEADER_BYTES = 256;

const utf8 = new TextDecoder('utf-8', { fatal: true });

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
  if (/[\r\n\0]/.test(value)) return { refused: `${name}: contains a line break or NUL` };
  if (!list && value.includes(',')) return { refused: `${name}: must be one value, without commas` };
  return { value };
}

export const valueOf = (read: HeaderRead) => (read && 'value' in read ? read.value : undefined);

/** Names of `names` present on the request (repeated or not). */
export const presentHeaders = (req: IncomingMessage, names: readonly string[]) => names.filter((name) => req.headersDistinct[name.toLowerCase()] !== undefined);
