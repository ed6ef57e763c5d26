import type { IncomingMessage } from 'node:http';
import Negotiator from 'negotiator';

/** The languages of the texts a person reads: the spec's Japanese, or English. */
export type PersonLocale = 'ja' | 'en';

/**
 * The language a person's client asks for (Accept-Language, with its q-values): `ja` when Japanese is
 * preferred over English, English otherwise (no header, another language, or English first). The Chat
 * API, A2A and the console use it; MCP tool texts keep `mcp.locale` (the spec's strings).
 */
export function personLocale(req: Pick<IncomingMessage, 'headers'>): PersonLocale {
  return new Negotiator(req).language(['en', 'ja']) === 'ja' ? 'ja' : 'en';
}
