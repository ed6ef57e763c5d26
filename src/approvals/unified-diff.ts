import { createTwoFilesPatch } from 'diff';
import { cutText } from '../common/cut-text.js';

const CONTEXT = 3;

/** What makes git quote a path in a diff (core.quotePath off), and what a reader would not see as itself: controls, bidi marks. */
const QUOTED = /["\\\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
const ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\t': '\\t', '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\u0007': '\\a' };

/**
 * `prefix` + `path` as a diff header names it: as is, or C-quoted as git quotes it (`"a/y\n+++ b"`) when it
 * holds a control character, a quote or a backslash, so a file name can never read as another header or a
 * hunk. Other characters to quote go as the octal escapes of their UTF-8 bytes (`\342\200\256`).
 */
export function diffPath(prefix: string, path: string): string {
  const named = `${prefix}${path}`;
  if (!QUOTED.test(named)) return named;
  let quoted = '';
  for (const c of named) {
    if (ESCAPES[c]) quoted += ESCAPES[c];
    else if (QUOTED.test(c)) for (const byte of Buffer.from(c, 'utf8')) quoted += `\\${byte.toString(8).padStart(3, '0')}`;
    else quoted += c;
  }
  return `"${quoted}"`;
}

export interface BoundedDiff {
  /** A unified diff, cut to the bounds with a closing marker line when longer. */
  text: string;
  /** Whether lines were left out. */
  truncated: boolean;
}

/**
 * A unified diff of `before` → `after` (jsdiff's, with 3 lines of context and its `\ No newline at end of file`
 * markers, so that a change of the final newline alone shows), cut at `maxLines` / `maxChars` so a large file
 * never reaches a client whole. The edit search is bounded (no more edits than the lines shown, and in time): past
 * it (two large, unrelated texts) the diff is the whole old text removed and the whole new one added, which is what
 * such a change is to a reader.
 */
export function unifiedDiff(path: string, before: string | null, after: string, bounds: { maxLines: number; maxChars: number }): BoundedDiff {
  const from = before === null ? '/dev/null' : diffPath('a/', path);
  const patch = createTwoFilesPatch(from, diffPath('b/', path), before ?? '', after, undefined, undefined, {
    context: CONTEXT,
    maxEditLength: bounds.maxLines,
    timeout: SEARCH_MS,
  });
  // Without the `Index:`/`====` banner, and without the final newline: the diff is shown as lines.
  const lines =
    patch === undefined
      ? replaced(from, path, before ?? '', after)
      : patch
          .replace(/\n$/, '')
          .split('\n')
          .filter((line) => !/^={5,}$/.test(line));
  return bound(lines, bounds);
}

/** How long the edit search may take before the diff falls back to "all removed, all added". */
const SEARCH_MS = 200;

function replaced(from: string, path: string, before: string, after: string): string[] {
  const side = (text: string, sign: string) => {
    if (text === '') return { count: 0, lines: [] };
    const lines = text
      .replace(/\n$/, '')
      .split('\n')
      .map((line) => `${sign}${line}`);
    return { count: lines.length, lines: text.endsWith('\n') ? lines : [...lines, NO_NEWLINE] };
  };
  const old = side(before, '-');
  const next = side(after, '+');
  const range = (count: number) => (count === 0 ? '0,0' : `1,${count}`);
  return [`--- ${from}`, `+++ ${diffPath('b/', path)}`, `@@ -${range(old.count)} +${range(next.count)} @@`, ...old.lines, ...next.lines];
}

const NO_NEWLINE = '\\ No newline at end of file';

function bound(lines: string[], { maxLines, maxChars }: { maxLines: number; maxChars: number }): BoundedDiff {
  const kept: string[] = [];
  let chars = 0;
  for (const line of lines) {
    const cut = cutText(line, maxChars);
    if (kept.length >= maxLines || chars + cut.length + 1 > maxChars) {
      kept.push(`… ${lines.length - kept.length} more diff lines not shown`);
      return { text: kept.join('\n'), truncated: true };
    }
    kept.push(cut);
    chars += cut.length + 1;
  }
  return { text: kept.join('\n'), truncated: false };
}
