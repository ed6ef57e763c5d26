import { AgentError } from './agent-error.js';

/** The largest `seq` there can be: PostgreSQL's `integer` (SQLite's is wider); a larger one is no cursor of ours. */
export const MAX_SEQ = 2_147_483_647;

/** Opaque keyset cursors: the last `seq` a page returned (new rows only ever get higher numbers). */
export const encodeCursor = (seq: number) => Buffer.from(JSON.stringify({ seq: Number(seq) })).toString('base64url');

export function decodeCursor(cursor: string): number {
  try {
    const seq = (JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { seq?: unknown }).seq;
    if (typeof seq === 'number' && Number.isInteger(seq) && seq >= 0 && seq <= MAX_SEQ) return seq;
  } catch {
    // fall through
  }
  throw new AgentError('invalid_input', 'cursor: not a cursor returned by this API');
}
