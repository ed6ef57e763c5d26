import { diffPath, unifiedDiff } from '../approvals/unified-diff.js';
import type { FileChange, FileSide } from './change-set.js';

export interface DiffBounds {
  /** Per file, as an approval's diff is bounded. */
  maxLines: number;
  maxChars: number;
  /** The whole diff. */
  maxTotalChars: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Text a person can read in a diff: valid UTF-8 without NUL; anything else is shown by hash and size. */
function textOf(bytes: Buffer | undefined): string | null {
  if (!bytes) return null;
  try {
    const text = utf8.decode(bytes);
    return text.includes('\0') ? null : text;
  } catch {
    return null;
  }
}

const octal = (side: FileSide) => (side.gitMode === '120000' ? '120000' : `100${side.mode.toString(8).padStart(3, '0')}`);
const sizeOf = (side: FileSide, blobs: Map<string, Buffer>) => side.large?.size ?? blobs.get(side.oid)?.length ?? 0;

/**
 * A change set as one unified diff (`text/x-diff`): per file git's extended header lines (new/deleted
 * file mode, old/new mode, rename from/to, index), then the hunk the approvals show for the same change
 * (`unifiedDiff`, one function for both), or a `Binary files … differ` line with the sizes for binary
 * and large files (large ones by SHA-256: their content is not kept). Bounded per file and in total.
 */
export function renderDiff(changes: FileChange[], blobs: Map<string, Buffer>, bounds: DiffBounds): string {
  const parts: string[] = [];
  let total = 0;
  for (const [index, change] of changes.entries()) {
    const part = renderFile(change, blobs, bounds);
    if (total + part.length > bounds.maxTotalChars) {
      parts.push(`# … ${changes.length - index} more changed files not shown (the diff is over ${bounds.maxTotalChars} characters)\n`);
      break;
    }
    parts.push(part);
    total += part.length;
  }
  return parts.join('');
}

function renderFile(change: FileChange, blobs: Map<string, Buffer>, bounds: DiffBounds): string {
  const { before, after } = change;
  const oldPath = change.from ?? change.path;
  const lines = [`diff --git ${diffPath('a/', oldPath)} ${diffPath('b/', change.path)}`];
  if (!before && after) lines.push(`new file mode ${octal(after)}`);
  if (before && !after) lines.push(`deleted file mode ${octal(before)}`);
  if (before && after && octal(before) !== octal(after)) lines.push(`old mode ${octal(before)}`, `new mode ${octal(after)}`);
  if (change.status === 'renamed') lines.push('similarity index 100%', `rename from ${diffPath('', oldPath)}`, `rename to ${diffPath('', change.path)}`);
  if (change.status === 'mode' || change.status === 'renamed') return `${lines.join('\n')}\n`;
  lines.push(`index ${before?.oid.slice(0, 12) ?? '000000000000'}..${after?.oid.slice(0, 12) ?? '000000000000'}`);
  const large = before?.large ?? after?.large;
  const oldText = before && !before.large ? textOf(blobs.get(before.oid)) : null;
  const newText = after && !after.large ? textOf(blobs.get(after.oid)) : null;
  if (large || (before && oldText === null) || (after && newText === null)) {
    const describe = (side: FileSide | null) => (side ? `${sizeOf(side, blobs)} bytes${side.large ? `, sha256 ${side.large.sha256}` : ''}` : 'none');
    lines.push(
      `Binary files ${before ? diffPath('a/', oldPath) : '/dev/null'} and ${after ? diffPath('b/', change.path) : '/dev/null'} differ (${describe(before)} -> ${describe(after)}${large ? '; large files are recorded by hash, not kept' : ''})`,
    );
    return `${lines.join('\n')}\n`;
  }
  const hunk = unifiedDiff(change.path, before ? (oldText ?? '') : null, newText ?? '', { maxLines: bounds.maxLines, maxChars: bounds.maxChars }).text;
  const hunkLines = hunk.split('\n');
  if (!after) hunkLines[1] = '+++ /dev/null';
  return `${[...lines, ...hunkLines].join('\n')}\n`;
}
