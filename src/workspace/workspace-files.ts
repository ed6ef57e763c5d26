import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { globToRegExp } from './glob-pattern.js';
import { assertRoom } from './workspace-usage.js';
import { WorkspaceError } from './workspace-error.js';
import type { WorkspacePaths } from './workspace-paths.js';

const MAX_LISTED = 500;
const MAX_MATCHES = 200;
const MAX_GREP_FILE_BYTES = 2 * 1024 * 1024;
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

export interface FileChange {
  path: string;
  bytes: number;
  created: boolean;
}

/** The file tools of the agent, each confined by WorkspacePaths. Results are plain text for the model. */
@Injectable()
export class WorkspaceFiles {
  async listDir(paths: WorkspacePaths, path = '.'): Promise<string> {
    const dir = await paths.forRead(path);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => {
      throw new WorkspaceError('invalid', `${path}: not a directory`);
    });
    const lines = entries
      .sort((a, b) => a.name.localeCompare(b.name))
      .slice(0, MAX_LISTED)
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.isSymbolicLink() ? `${entry.name}@` : entry.name));
    if (entries.length > MAX_LISTED) lines.push(`… ${entries.length - MAX_LISTED} more entries`);
    return lines.join('\n') || '(empty directory)';
  }

  /** Lines `start_line`..`end_line` (1-based, inclusive), numbered so the model can cite them. */
  async readFile(paths: WorkspacePaths, path: string, startLine?: number, endLine?: number): Promise<string> {
    const file = await paths.forRead(path);
    if (!(await stat(file)).isFile()) throw new WorkspaceError('invalid', `${path}: not a regular file`);
    const lines = (await readFile(file, 'utf8')).split('\n');
    const from = Math.max(1, Math.floor(startLine ?? 1));
    const to = Math.min(lines.length, Math.floor(endLine ?? lines.length));
    if (from > to && lines.length > 0 && !(lines.length === 1 && lines[0] === '')) {
      throw new WorkspaceError('invalid', `${path}: line range ${from}-${to} is outside 1-${lines.length}`);
    }
    return lines.slice(from - 1, to).map((line, index) => `${from + index}\t${line}`).join('\n');
  }

  /** A regular file's size, for listings; null when the path is not a regular file inside the workspace. */
  async sizeOf(paths: WorkspacePaths, path: string): Promise<number | null> {
    const file = await paths.forRead(path).catch(() => null);
    const info = file ? await stat(file).catch(() => null) : null;
    return info?.isFile() ? info.size : null;
  }

  /**
   * A regular file's bytes, at most `maxBytes` of them: the size is taken from the open descriptor and
   * the read is bounded, so a file that grows meanwhile cannot make it read more.
   */
  async readBytes(paths: WorkspacePaths, path: string, maxBytes: number): Promise<Buffer> {
    const handle = await open(await paths.forRead(path), constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => {
      throw new WorkspaceError('not_found', `${path}: no such file`);
    });
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new WorkspaceError('not_found', `${path}: not a regular file`);
      if (info.size > maxBytes) throw new WorkspaceError('too_large', `${path} is ${info.size} bytes, more than the ${maxBytes} bytes that can be read at once`);
      const buffer = Buffer.alloc(info.size);
      const { bytesRead } = await handle.read(buffer, 0, info.size, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  /**
   * Atomic: written to a new sibling file (O_EXCL|O_NOFOLLOW), then renamed over the target. Refused
   * when the result would take the workspace past its quota.
   */
  async writeFile(paths: WorkspacePaths, path: string, content: string | Buffer): Promise<FileChange> {
    const target = await paths.forWrite(path);
    const previous = await lstat(target).catch(() => null);
    const created = !previous;
    await assertRoom(paths, Buffer.byteLength(content) - (previous?.size ?? 0));
    const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temp, target);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return { path: paths.display(target), bytes: Buffer.byteLength(content), created };
  }

  /** Replaces exactly one occurrence of `oldText`; zero or several occurrences are refused with the count. */
  async editFile(paths: WorkspacePaths, path: string, oldText: string, newText: string): Promise<FileChange> {
    if (oldText.length === 0) throw new WorkspaceError('invalid', 'old_text: must not be empty');
    const source = await readFile(await paths.forRead(path), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error instanceof WorkspaceError) throw error;
      throw new WorkspaceError('not_found', `${path}: cannot read (${error.code ?? error.message})`);
    });
    const occurrences = source.split(oldText).length - 1;
    if (occurrences !== 1) {
      throw new WorkspaceError('invalid', `${path}: old_text occurs ${occurrences} times; it must occur exactly once`);
    }
    const change = await this.writeFile(paths, path, source.replace(oldText, () => newText));
    return { ...change, created: false };
  }

  async glob(paths: WorkspacePaths, pattern: string): Promise<string> {
    const matcher = globToRegExp(pattern.replace(/^\.\//, ''));
    const matches: string[] = [];
    for await (const file of walk(paths.root)) {
      const rel = relative(paths.root, file).split(sep).join('/');
      if (matcher.test(rel)) matches.push(rel);
      if (matches.length > MAX_MATCHES) break;
    }
    return formatMatches(matches, 'no files match');
  }

  async grep(paths: WorkspacePaths, pattern: string, path = '.'): Promise<string> {
    let regex: RegExp;
    try {
      regex = new RegExp(pattern);
    } catch (error) {
      throw new WorkspaceError('invalid', `pattern: ${(error as Error).message}`);
    }
    const start = await paths.forRead(path);
    const files = (await stat(start)).isFile() ? [start] : walk(start);
    const matches: string[] = [];
    for await (const file of files) {
      const info = await stat(file);
      if (info.size > MAX_GREP_FILE_BYTES) continue;
      const text = await readFile(file, 'utf8');
      if (text.includes('\0')) continue;
      text.split('\n').forEach((line, index) => {
        if (matches.length <= MAX_MATCHES && regex.test(line)) matches.push(`${paths.display(file)}:${index + 1}: ${line.slice(0, 300)}`);
      });
      if (matches.length > MAX_MATCHES) break;
    }
    return formatMatches(matches, 'no matches');
  }
}

/** Regular files below `dir`, without following symlinks and skipping .git and node_modules. */
async function* walk(dir: string): AsyncGenerator<string> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(dir, entry.name);
    if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) yield* walk(full);
    else if (entry.isFile()) yield full;
  }
}

function formatMatches(matches: string[], none: string): string {
  if (matches.length === 0) return none;
  if (matches.length > MAX_MATCHES) return `${matches.slice(0, MAX_MATCHES).join('\n')}\n… more results omitted`;
  return matches.join('\n');
}
