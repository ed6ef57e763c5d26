import { cutText } from '../common/cut-text.js';

/**
 * How much one audit event may hold. Every event's detail passes through `boundForAudit`, so what one
 * call can add to the append-only log is a few KiB whatever it sends (a 25 MB argument, a 10^6-item
 * array, 5 000 nested arrays), and what is hashed into the chain is this bounded copy.
 */
export const AUDIT_LIMITS = {
  /** Containers nested deeper than this are replaced by a marker. */
  depth: 8,
  /** Items of one array, keys of one object. */
  entries: 64,
  /** One string value. */
  stringChars: 2000,
  /** One object key. */
  keyChars: 128,
  /** The whole detail, counted as the characters of its kept strings and keys. */
  totalChars: 16 * 1024,
  /** The actor and client columns (varchar(320) and varchar(200) on PostgreSQL), marker included. */
  actorChars: 280,
  clientChars: 160,
} as const;

/** The key of the marker entry an object gets when some of its keys were cut. */
export const CUT_KEY = '…';

export interface BoundOptions {
  /** Applied to every kept string and key before it is cut (redaction of secrets). */
  text?: (value: string) => string;
  /** A replacement for a value under a given key (Base64 data recorded by its length); undefined keeps it. */
  replace?: (key: string, value: unknown) => unknown;
}

/**
 * A copy of `value` bounded in depth, entries and total size, each cut marked in place: a string
 * says its full length, an array ends with a marker item, an object gets a `…` key, and a container
 * beyond the depth limit becomes a marker string. Never recurses deeper than the depth limit.
 */
export function boundForAudit(value: unknown, options: BoundOptions = {}): unknown {
  let budget: number = AUDIT_LIMITS.totalChars;
  const text = (raw: string, max: number) => {
    const limit = Math.max(0, Math.min(max, budget));
    // Only a head is looked at (a 25 MB string costs what a short one does), redacted with some text
    // past the cut so that a secret straddling it is masked whole.
    const head = raw.length > limit + 512 ? raw.slice(0, limit + 512) : raw;
    const shown = options.text ? options.text(head) : head;
    const result = cutText(shown, limit, { mark: 'cut', length: raw.length, partial: head.length < raw.length });
    budget -= result.length;
    return result;
  };
  const walk = (item: unknown, key: string, depth: number): unknown => {
    const replaced = options.replace?.(key, item);
    if (replaced !== undefined) return replaced;
    if (typeof item === 'string') return text(item, AUDIT_LIMITS.stringChars);
    if (typeof item !== 'object' || item === null) {
      budget -= 8;
      return item;
    }
    const keys = Array.isArray(item) ? null : Object.keys(item);
    const size = keys ? keys.length : (item as unknown[]).length;
    if (depth >= AUDIT_LIMITS.depth) return `…[cut: ${keys ? 'object' : 'array'} of ${size} entries nested deeper than ${AUDIT_LIMITS.depth} levels]`;
    const kept: [string, unknown][] = [];
    for (let index = 0; index < size && kept.length < AUDIT_LIMITS.entries && budget > 0; index++) {
      const entryKey = keys ? keys[index] : String(index);
      const entry = (item as Record<string, unknown>)[entryKey];
      kept.push([keys ? text(entryKey, AUDIT_LIMITS.keyChars) : entryKey, walk(entry, entryKey, depth + 1)]);
    }
    const marker = size > kept.length ? `…[cut: ${size - kept.length} of ${size} entries]` : null;
    if (!keys) return marker ? [...kept.map(([, entry]) => entry), marker] : kept.map(([, entry]) => entry);
    return Object.fromEntries(marker ? [...kept, [CUT_KEY, marker]] : kept);
  };
  return walk(value, '', 0);
}
