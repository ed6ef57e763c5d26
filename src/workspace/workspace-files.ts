import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { link, lstat, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { at, locate, openBeneath, READ_FLAGS, walkBeneath } from './beneath.js';
import { globToRegExp } from './glob-pattern.js';
import { assertRoom, recordChange } from './workspace-usage.js';
import { WorkspaceError } from './workspace-error.js';
import { denied, type WorkspacePaths } from './workspace-paths.js';

const MAX_LISTED = 500;
const MAX_MATCHES = 200;
const MAX_GREP_FILE_BYTES = 2 * 1024 * 1024;
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);
/**
 * No file operation of one request may hold libuv's small thread pool (four threads, shared by every
 * request and Task) for long: past this the request fails. Nothing here blocks by design (O_NONBLOCK,
 * non-regular files refused before reading); this bounds what a slow or hung disk could still do.
 */
export const FILE_OP_TIMEOUT_MS = 15_000;

export interface FileChange {
  path: string;
  bytes: number;
  created: boolean;
}

/**
 * The file tools of the agent and the readers of deliverables, each confined to the workspace root
 * and race-free against a command changing the tree meanwhile (beneath.ts). Results are plain text
 * for the model. Only regular files are read: a FIFO, socket or device is "not found".
 */
@Injectable()
export class WorkspaceFiles {
  listDir(paths: WorkspacePaths, path = '.'): Promise<string> {
    return bounded(path, async () => {
      const { handle, info } = await openBeneath(paths.root, paths.segments(path), path);
      try {
        if (!info.isDirectory()) throw new WorkspaceError('invalid', `${path}: not a directory`);
        const entries = await readdir(at(handle), { withFileTypes: true });
        const lines = entries
          .sort((a, b) => a.name.localeCompare(b.name))
          .slice(0, MAX_LISTED)
          .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.isSymbolicLink() ? `${entry.name}@` : entry.name));
        if (entries.length > MAX_LISTED) lines.push(`… ${entries.length - MAX_LISTED} more entries`);
        return lines.join('\n') || '(empty directory)';
      } finally {
        await handle.close();
      }
    });
  }

  /** Lines `start_line`..`end_line` (1-based, inclusive), numbered so the model can cite them. */
  async readFile(paths: WorkspacePaths, path: string, startLine?: number, endLine?: number): Promise<string> {
    const lines = (await this.readText(paths, path)).split('\n');
    const from = Math.max(1, Math.floor(startLine ?? 1));
    const to = Math.min(lines.length, Math.floor(endLine ?? lines.length));
    if (from > to && lines.length > 0 && !(lines.length === 1 && lines[0] === '')) {
      throw new WorkspaceError('invalid', `${path}: line range ${from}-${to} is outside 1-${lines.length}`);
    }
    return lines
      .slice(from - 1, to)
      .map((line, index) => `${from + index}\t${line}`)
      .join('\n');
  }

  /** A regular file's whole text (UTF-8). */
  readText(paths: WorkspacePaths, path: string): Promise<string> {
    return bounded(path, () => withRegularFile(paths, path, 'invalid', (handle) => handle.readFile('utf8')));
  }

  /** A regular file's size, for listings; null when the path is not a regular file inside the workspace. */
  sizeOf(paths: WorkspacePaths, path: string): Promise<number | null> {
    return bounded(path, () => withRegularFile(paths, path, 'not_found', async (_handle, info) => info.size)).catch(() => null);
  }

  /**
   * A regular file's bytes, at most `maxBytes` of them: the size is taken from the open descriptor and
   * the read is bounded, so a file that grows meanwhile cannot make it read more.
   */
  readBytes(paths: WorkspacePaths, path: string, maxBytes: number): Promise<Buffer> {
    return bounded(path, () =>
      withRegularFile(paths, path, 'not_found', async (handle, info) => {
        if (info.size > maxBytes) throw new WorkspaceError('too_large', `${path} is ${info.size} bytes, more than the ${maxBytes} bytes that can be read at once`);
        const buffer = Buffer.alloc(info.size);
        const { bytesRead } = await handle.read(buffer, 0, info.size, 0);
        return buffer.subarray(0, bytesRead);
      }),
    );
  }

  /**
   * Atomic: written to a new sibling file (O_EXCL|O_NOFOLLOW) in the directory held open, then renamed
   * over the target there. Refused when the result would take the workspace past its limits.
   * `replace: false`: only a new file, linked in place of the rename (which would replace one that
   * appeared meanwhile); an existing name is `exists`.
   */
  writeFile(paths: WorkspacePaths, path: string, content: string | Buffer, { replace = true } = {}): Promise<FileChange> {
    return bounded(path, async () => {
      const segments = paths.writableSegments(path);
      const { parent, name, segments: real } = await locate(paths.root, segments, path, { followLast: false, createDirs: true });
      try {
        const target = name!;
        const previous = await lstat(at(parent, target)).catch(() => null);
        if (previous?.isSymbolicLink()) throw denied(path, 'is a symbolic link');
        if (previous?.isDirectory()) throw new WorkspaceError('invalid', `${path}: is a directory`);
        if (previous && !previous.isFile()) throw denied(path, 'is not a regular file');
        if (previous && !replace) throw new WorkspaceError('exists', `${path}: exists`);
        if (previous && previous.nlink > 1) throw denied(path, 'has other hard links (possibly outside the workspace)');
        const bytes = Buffer.byteLength(content);
        const growth = bytes - (previous?.size ?? 0);
        await assertRoom(paths, growth, previous ? 0 : 1);
        const temp = `.${target}.${randomBytes(6).toString('hex')}.tmp`;
        const handle = await open(at(parent, temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
        try {
          await handle.writeFile(content);
          await handle.sync();
        } finally {
          await handle.close();
        }
        try {
          if (replace) await rename(at(parent, temp), at(parent, target));
          else await link(at(parent, temp), at(parent, target)).finally(() => unlink(at(parent, temp)));
        } catch (error) {
          await unlink(at(parent, temp)).catch(() => undefined);
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new WorkspaceError('exists', `${path}: exists`);
          throw error;
        }
        // Its inode too: a command that grows it later past the quota has that growth cut back (ADR 0038).
        const written = await lstat(at(parent, target)).catch(() => null);
        recordChange(paths, growth, previous ? 0 : 1, real.join('/'), { size: bytes, ino: written?.ino ?? -1 });
        return { path: paths.display(real), bytes, created: !previous };
      } finally {
        await parent.close();
      }
    });
  }

  /** Replaces exactly one occurrence of `oldText`; zero or several occurrences are refused with the count. */
  async editFile(paths: WorkspacePaths, path: string, oldText: string, newText: string): Promise<FileChange> {
    if (oldText.length === 0) throw new WorkspaceError('invalid', 'old_text: must not be empty');
    const source = await this.readText(paths, path).catch((error: Error) => {
      if (error instanceof WorkspaceError && error.code !== 'invalid') throw error;
      throw new WorkspaceError('not_found', `${path}: cannot read (${error.message})`);
    });
    const occurrences = source.split(oldText).length - 1;
    if (occurrences !== 1) {
      throw new WorkspaceError('invalid', `${path}: old_text occurs ${occurrences} times; it must occur exactly once`);
    }
    const change = await this.writeFile(
      paths,
      path,
      source.replace(oldText, () => newText),
    );
    return { ...change, created: false };
  }

  glob(paths: WorkspacePaths, pattern: string): Promise<string> {
    return bounded(pattern, async () => {
      const matcher = globToRegExp(pattern.replace(/^\.\//, ''));
      const matches: string[] = [];
      const { handle } = await openBeneath(paths.root, [], '.');
      try {
        for await (const { rel, entry } of walkBeneath(handle, SKIPPED_DIRS)) {
          if (entry.isFile() && matcher.test(rel)) matches.push(rel);
          if (matches.length > MAX_MATCHES) break;
        }
      } finally {
        await handle.close();
      }
      return formatMatches(matches, 'no files match');
    });
  }

  grep(paths: WorkspacePaths, pattern: string, path = '.'): Promise<string> {
    return bounded(path, async () => {
      let regex: RegExp;
      try {
        regex = new RegExp(pattern);
      } catch (error) {
        throw new WorkspaceError('invalid', `pattern: ${(error as Error).message}`);
      }
      const { handle, info, segments } = await openBeneath(paths.root, paths.segments(path), path);
      const matches: string[] = [];
      const search = (text: string, shown: string) => {
        if (text.includes('\0')) return;
        text.split('\n').forEach((line, index) => {
          if (matches.length <= MAX_MATCHES && regex.test(line)) matches.push(`${shown}:${index + 1}: ${line.slice(0, 300)}`);
        });
      };
      try {
        if (info.isFile()) {
          if (info.size <= MAX_GREP_FILE_BYTES) search(await handle.readFile('utf8'), paths.display(segments));
        } else if (info.isDirectory()) {
          for await (const { dir, name, rel, entry } of walkBeneath(handle, SKIPPED_DIRS)) {
            if (!entry.isFile()) continue;
            const text = await readRegularAt(dir, name, MAX_GREP_FILE_BYTES);
            if (text !== null) search(text, paths.display([...segments, ...rel.split('/')]));
            if (matches.length > MAX_MATCHES) break;
          }
        }
      } finally {
        await handle.close();
      }
      return formatMatches(matches, 'no matches');
    });
  }
}

/** Runs `use` on the path's regular file, opened race-free; anything else is `notRegular` (or not found). */
async function withRegularFile<T>(paths: WorkspacePaths, path: string, notRegular: 'invalid' | 'not_found', use: (handle: FileHandle, info: Stats) => Promise<T>): Promise<T> {
  const { handle, info } = await openBeneath(paths.root, paths.segments(path), path);
  try {
    if (!info.isFile()) throw new WorkspaceError(notRegular, `${path}: not a regular file`);
    return await use(handle, info);
  } finally {
    await handle.close();
  }
}

/** The text of the regular file `name` in `dir`, if it is one and at most `maxBytes` long. */
async function readRegularAt(dir: FileHandle, name: string, maxBytes: number): Promise<string | null> {
  const handle = await open(at(dir, name), READ_FLAGS).catch(() => null);
  if (!handle) return null;
  try {
    const info = await handle.stat();
    return info.isFile() && info.size <= maxBytes ? await handle.readFile('utf8') : null;
  } finally {
    await handle.close();
  }
}

/** `operation`, failed with a clear error once it has taken FILE_OP_TIMEOUT_MS. */
export function bounded<T>(subject: string, operation: () => Promise<T>, timeoutMs = FILE_OP_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WorkspaceError('timeout', `${subject}: the file operation took longer than ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([operation(), deadline]).finally(() => clearTimeout(timer));
}

function formatMatches(matches: string[], none: string): string {
  if (matches.length === 0) return none;
  if (matches.length > MAX_MATCHES) return `${matches.slice(0, MAX_MATCHES).join('\n')}\n… more results omitted`;
  return matches.join('\n');
}
