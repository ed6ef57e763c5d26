/**
 * Characters a terminal or a browser would act on instead of showing: C0 and C1 controls (CR returns
 * to the line's start, ESC starts a sequence that can erase it), bidirectional controls (U+202E shows
 * `txt.exe` as `exe.txt`), zero-width and line/paragraph separators. `keep` names the ones that stay
 * (line breaks and tabs of a diff).
 */
const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** `text` with every character a person would not see as itself written as an escape (`\r`, `\x1b`, `\u202e`). */
export function shownEscaped(text: string, keep: readonly string[] = []): string {
  return text.replace(UNSHOWABLE, (c) => {
    if (keep.includes(c)) return c;
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** A diff as shown: its line breaks and tabs kept, every other unshowable character escaped. */
export const shownDiff = (diff: string) => shownEscaped(diff, ['\n', '\t']);
