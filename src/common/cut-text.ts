/** How a cut says how long the text was: not at all, ` (N chars)` (traces), or `[cut: N chars]` (the audit log, admin lists). */
const MARKS = {
  none: () => '',
  chars: (length: number) => ` (${length} chars)`,
  cut: (length: number) => `[cut: ${length} chars]`,
} as const;

export interface CutOptions {
  mark?: keyof typeof MARKS;
  /** The length the mark states when `text` is a copy of an original's head (redacted): that original's. */
  length?: number;
  /** `text` is only a head of its original: cut and marked even when it fits. */
  partial?: boolean;
}

/**
 * `text` cut to its first `max` UTF-16 code units followed by `…` and the mark; unchanged when it fits. A cut never
 * splits a surrogate pair (an emoji): the cut ends before it, so the result stays well-formed.
 */
export function cutText(text: string, max: number, { mark = 'none', length = text.length, partial = false }: CutOptions = {}): string {
  if (text.length <= max && !partial) return text;
  const end = max > 0 && max < text.length && isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}…${MARKS[mark](length)}`;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
