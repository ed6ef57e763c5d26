import { mkdir, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { WorkspaceError } from './workspace-error.js';

const PROTECTED = ['.git'];

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/** What a workspace holds: bytes (every entry's own size, links not followed) and entries. */
export interface Usage {
  bytes: number;
  entries: number;
}

/** A file as the last usage walk found it: what the quota compares a command's changes against. */
export interface FileMark {
  size: number;
  ino: number;
}

/** What a session's workspace may hold; null for no limit. */
export interface WorkspaceLimits {
  /** The most bytes the files below the root may hold (`workspace.max_session_bytes`). */
  maxBytes: number | null;
  /** The most entries (files, directories, links) below the root (`workspace.max_session_files`). */
  maxFiles: number | null;
}

/**
 * Confines tool paths to the workspace root. Paths are relative to the root; absolute paths, `..`
 * escapes, backslashes and NUL are refused lexically and the rest is split into names, which the
 * file plane (beneath.ts) then walks one at a time from the root's descriptor, so that a command
 * swapping a directory for a link meanwhile can never lead it out. Writes also refuse the protected
 * `.git` directory.
 */
export class WorkspacePaths {
  /** The workspace's usage as last measured and since kept up to date by the file tools; null: unknown. */
  usage: Usage | null = null;
  /** Each entry's size and inode at the walk that measured `usage`, by `/`-separated relative path; null: none. */
  marks: Map<string, FileMark> | null = null;

  private constructor(
    readonly root: string,
    readonly limits: WorkspaceLimits,
  ) {}

  static async open(configuredRoot: string, maxBytes: number | null = null, maxFiles: number | null = null): Promise<WorkspacePaths> {
    const absolute = resolve(configuredRoot);
    await mkdir(absolute, { recursive: true });
    return new WorkspacePaths(await realpath(absolute), { maxBytes, maxFiles });
  }

  get maxBytes(): number | null {
    return this.limits.maxBytes;
  }

  /** The path shown to the model and in traces: relative to the root, `.` for the root itself. */
  display(segments: string[]): string {
    return segments.join('/') || '.';
  }

  /** The names of a workspace-relative path, checked lexically; [] is the root itself. */
  segments(path: string): string[] {
    if (typeof path !== 'string' || path.length === 0) throw new WorkspaceError('invalid', 'path: must be a non-empty string');
    if (path.includes('\0')) throw denied(path, 'contains NUL');
    if (path.includes('\\')) throw denied(path, 'contains a backslash');
    if (isAbsolute(path)) throw denied(path, 'is absolute; use a path relative to the workspace');
    const lexical = resolve(this.root, path);
    if (!inside(this.root, lexical)) throw denied(path, 'leaves the workspace');
    const rel = relative(this.root, lexical);
    return rel === '' ? [] : rel.split(sep);
  }

  /** The names of a file to create or replace: not the root, not below a protected directory. */
  writableSegments(path: string): string[] {
    const segments = this.segments(path);
    if (segments.length === 0) throw denied(path, 'is the workspace root');
    if (PROTECTED.includes(segments[0])) throw denied(path, `${segments[0]}/ is read-only`);
    return segments;
  }
}

export const denied = (path: string, why: string) => new WorkspaceError('path_denied', `${path.replace(/\0/g, '\\0')}: refused, ${why}`);
