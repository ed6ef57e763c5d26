import { cutText } from '../common/cut-text.js';

const CONTEXT = 3;

export interface BoundedDiff {
  /** A unified diff, cut to the bounds with a closing marker line when longer. */
  text: string;
  /** Whether lines were left out. */
  truncated: boolean;
}

/**
 * A unified diff of `before` → `after` as one hunk around the changed region: the common leading and
 * trailing lines are trimmed and kept as context. Linear in the file size (a person approves one edit
 * or one overwrite, which is one region, so a minimal edit script buys nothing here), and cut at
 * `maxLines` / `maxChars` so a large file never reaches a client whole.
 */
export function unifiedDiff(path: string, before: string | null, after: string, bounds: { maxLines: number; maxChars: number }): BoundedDiff {
  const old = before === null ? [] : splitLines(before);
  const next = splitLines(after);
  let head = 0;
  while (head < old.length && head < next.length && old[head] === next[head]) head++;
  let tail = 0;
  while (tail < old.length - head && tail < next.length - head && old[old.length - 1 - tail] === next[next.length - 1 - tail]) tail++;
  const lines = [`--- ${before === null ? '/dev/null' : `a/${path}`}`, `+++ b/${path}`];
  if (head === old.length && head === next.length) return { text: lines.join('\n'), truncated: false };
  const from = Math.max(0, head - CONTEXT);
  const oldEnd = Math.min(old.length, old.length - tail + CONTEXT);
  const newEnd = Math.min(next.length, next.length - tail + CONTEXT);
  const oldCount = oldEnd - from;
  const newCount = newEnd - from;
  lines.push(`@@ -${range(from, oldCount)} +${range(from, newCount)} @@`);
  for (let i = from; i < head; i++) lines.push(` ${old[i]}`);
  for (let i = head; i < old.length - tail; i++) lines.push(`-${old[i]}`);
  for (let i = head; i < next.length - tail; i++) lines.push(`+${next[i]}`);
  for (let i = next.length - tail; i < newEnd; i++) lines.push(` ${next[i]}`);
  return bound(lines, bounds);
}

/** Lines without their terminators; a final newline does not make an extra empty line. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/** `start,count` of a hunk header (1-based; an empty side starts at the line before). */
function range(from: number, count: number): string {
  return count === 0 ? `${from},0` : `${from + 1},${count}`;
}

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
