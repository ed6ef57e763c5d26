import { createTwoFilesPatch } from 'diff';
import { cutText } from '../common/cut-text.js';

const CONTEXT = 3;

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
  const from = before === null ? '/dev/null' : `a/${path}`;
  const patch = createTwoFilesPatch(from, `b/${path}`, before ?? '', after, undefined, undefined, { context: CONTEXT, maxEditLength: bounds.maxLines, timeout: SEARCH_MS });
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
  return [`--- ${from}`, `+++ b/${path}`, `@@ -${range(old.count)} +${range(next.count)} @@`, ...old.lines, ...next.lines];
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
