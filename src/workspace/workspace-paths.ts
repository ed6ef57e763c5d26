import { lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { WorkspaceError } from './workspace-error.js';

const PROTECTED = ['.git'];

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/**
 * Confines tool paths to the workspace root. Paths are relative to the root; absolute paths, `..`
 * escapes, backslashes and NUL are refused lexically, and then the real path (of the target, or of the
 * deepest existing ancestor for a new file) must lie inside the real root, separator-aware, so that
 * `/w/proj-evil` never passes for `/w/proj` and symlinks cannot lead out. Writes also refuse a
 * symlink as the final component, files with other hard links, and the protected `.git` directory.
 */
export class WorkspacePaths {
  private constructor(
    readonly root: string,
    /** The most bytes the files below the root may hold (a session's quota); null for no limit. */
    readonly maxBytes: number | null,
  ) {}

  static async open(configuredRoot: string, maxBytes: number | null = null): Promise<WorkspacePaths> {
    const absolute = resolve(configuredRoot);
    await mkdir(absolute, { recursive: true });
    return new WorkspacePaths(await realpath(absolute), maxBytes);
  }

  /** The path shown to the model and in traces: relative to the root, `.` for the root itself. */
  display(absolute: string): string {
    return relative(this.root, absolute) || '.';
  }

  /** An existing file or directory inside the workspace, symlinks resolved. */
  async forRead(path: string): Promise<string> {
    const lexical = this.lexical(path);
    let real: string;
    try {
      real = await realpath(lexical);
    } catch {
      throw new WorkspaceError('not_found', `${path}: no such file or directory`);
    }
    if (!inside(this.root, real)) throw denied(path, 'resolves outside the workspace');
    return real;
  }

  /** A file to create or replace inside the workspace; parent directories are created inside only. */
  async forWrite(path: string): Promise<string> {
    const lexical = this.lexical(path);
    if (lexical === this.root) throw denied(path, 'is the workspace root');
    const first = relative(this.root, lexical).split(sep)[0];
    if (PROTECTED.includes(first)) throw denied(path, `${first}/ is read-only`);
    const parent = await this.existingAncestor(dirname(lexical));
    if (!inside(this.root, parent.real)) throw denied(path, 'resolves outside the workspace');
    const target = join(parent.real, relative(parent.lexical, lexical));
    const stats = await lstat(target).catch(() => null);
    if (stats?.isSymbolicLink()) throw denied(path, 'is a symbolic link');
    if (stats?.isDirectory()) throw new WorkspaceError('invalid', `${path}: is a directory`);
    if (stats && stats.nlink > 1) throw denied(path, 'has other hard links (possibly outside the workspace)');
    await mkdir(dirname(target), { recursive: true });
    // Re-check after creating directories: nothing on the way may have become a link out.
    if (!inside(this.root, await realpath(dirname(target)))) throw denied(path, 'resolves outside the workspace');
    return target;
  }

  private lexical(path: string): string {
    if (typeof path !== 'string' || path.length === 0) throw new WorkspaceError('invalid', 'path: must be a non-empty string');
    if (path.includes('\0')) throw denied(path, 'contains NUL');
    if (path.includes('\\')) throw denied(path, 'contains a backslash');
    if (isAbsolute(path)) throw denied(path, 'is absolute; use a path relative to the workspace');
    const lexical = resolve(this.root, path);
    if (!inside(this.root, lexical)) throw denied(path, 'leaves the workspace');
    return lexical;
  }

  private async existingAncestor(dir: string): Promise<{ lexical: string; real: string }> {
    for (let current = dir; ; current = dirname(current)) {
      try {
        return { lexical: current, real: await realpath(current) };
      } catch {
        if (current === this.root || dirname(current) === current) throw new WorkspaceError('not_found', `${dir}: unreachable`);
      }
    }
  }
}

const denied = (path: string, why: string) => new WorkspaceError('path_denied', `${path.replace(/\0/g, '\\0')}: refused, ${why}`);
