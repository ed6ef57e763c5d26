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

/** `text` cut to its first `max` characters followed by `…` and the mark; unchanged when it fits. */
export function cutText(text: string, max: number, { mark = 'none', length = text.length, partial = false }: CutOptions = {}): string {
  return text.length > max || partial ? `${text.slice(0, max)}…${MARKS[mark](length)}` : text;
}
