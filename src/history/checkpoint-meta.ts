/** `before` and `after` a Task; an undo Task's checkpoints carry `undoOf`. */
export type CheckpointKind = 'before' | 'after';

export interface LargeFile {
  sha256: string;
  size: number;
}

/**
 * What a checkpoint commit's message holds beside its tree: whose boundary it is, its place in the
 * repository's sequence, and what git trees cannot hold (exact permission bits where they are not
 * 0644/0755, directories with their bits, large files by hash, paths left out).
 */
export interface CheckpointMeta {
  v: 1;
  kind: CheckpointKind;
  taskId: string;
  sessionId: string;
  seq: number;
  undoOf?: string;
  note?: string;
  dirs: Record<string, number>;
  modes: Record<string, number>;
  large: Record<string, LargeFile>;
  skipped: string[];
}

/** The permission bits a git file mode stands for when the checkpoint recorded nothing more exact. */
export function canonicalMode(gitMode: string): number {
  return gitMode === '100755' ? 0o755 : gitMode === '120000' ? 0o777 : 0o644;
}

/** `#<seq> <kind> <task> <session>[ undo-of <task>]`: what `for-each-ref` lists of the sequence. */
export function subjectOf(meta: Pick<CheckpointMeta, 'seq' | 'kind' | 'taskId' | 'sessionId' | 'undoOf'>): string {
  return `#${meta.seq} ${meta.kind} ${meta.taskId} ${meta.sessionId}${meta.undoOf ? ` undo-of ${meta.undoOf}` : ''}`;
}

/** One checkpoint as the refs list it. */
export interface CheckpointRef {
  commit: string;
  seq: number;
  kind: CheckpointKind;
  taskId: string;
  sessionId: string;
  undoOf: string | null;
}

export function parseSubject(commit: string, subject: string): CheckpointRef | null {
  const match = /^#(\d+) (before|after) (\S+) (\S+)(?: undo-of (\S+))?$/.exec(subject.trim());
  if (!match) return null;
  return { commit, seq: Number(match[1]), kind: match[2] as CheckpointKind, taskId: match[3], sessionId: match[4], undoOf: match[5] ?? null };
}

/** A large file's stand-in blob in the tree: the hash and size, never the content. */
export function pointerOf(large: LargeFile): Buffer {
  return Buffer.from(`large file, recorded by hash only\nsha256 ${large.sha256}\nsize ${large.size}\n`);
}

/** A path as git fast-import reads it: always C-quoted (bytes past ASCII as octal), so any name stays one path. */
export function quotePath(path: string): string {
  let quoted = '"';
  for (const byte of Buffer.from(path, 'utf8')) {
    if (byte === 0x22) quoted += '\\"';
    else if (byte === 0x5c) quoted += '\\\\';
    else if (byte === 0x0a) quoted += '\\n';
    else if (byte < 0x20 || byte >= 0x7f) quoted += `\\${byte.toString(8).padStart(3, '0')}`;
    else quoted += String.fromCharCode(byte);
  }
  return `${quoted}"`;
}
