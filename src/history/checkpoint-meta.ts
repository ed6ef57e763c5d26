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

/** `#<seq> <kind> <task> <session>`: what `git log --format=%s` lists of the sequence. */
export function subjectOf(meta: Pick<CheckpointMeta, 'seq' | 'kind' | 'taskId' | 'sessionId'>): string {
  return `#${meta.seq} ${meta.kind} ${meta.taskId} ${meta.sessionId}`;
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
