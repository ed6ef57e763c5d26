import type { SkillFileEntry, SkillFiles } from '@modelcontextprotocol/server/ext/skills';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { at, openDirAt, openRoot, READ_FLAGS } from '../workspace/beneath.js';

/** Where a session's own skills are, inside its workspace (the layout Codex and Claude Code read). */
export const WORKSPACE_SKILLS = ['.agents', 'skills'];
/** Entries one folder may list: the agent writes these folders, so they are bounded before they are read (and each file by `maxFileBytes`). */
const MAX_ENTRIES = 256;

/**
 * The SDK catalog's storage adapter over `.agents/skills` of a session workspace, which the agent (and the
 * commands it runs) can change at the same moment: every step walks one name at a time from the
 * workspace root's descriptor with O_NOFOLLOW (workspace/beneath.ts), so a link (to /etc, to another
 * session) is never followed; `list` reports it as `unsupported` and the catalog skips its skill.
 */
export function workspaceSkillFiles(workspaceRoot: string, maxFileBytes: number): SkillFiles {
  const inside = async <T>(path: string, use: (dir: FileHandle, last: string | null) => Promise<T>, { lastIsDir }: { lastIsDir: boolean }): Promise<T> => {
    const names = [...WORKSPACE_SKILLS, ...path.split('/').filter((part) => part !== '')];
    if (names.some((name) => name === '.' || name === '..')) throw new TypeError(`path must stay inside the skills folder (got ${JSON.stringify(path)})`);
    const last = lastIsDir ? null : names.pop()!;
    let dir = await openRoot(workspaceRoot);
    try {
      for (const name of names) {
        const next = await openDirAt(dir, name);
        await dir.close();
        dir = next;
      }
      return await use(dir, last);
    } finally {
      await dir.close();
    }
  };
  return {
    list: (path) =>
      inside(
        path,
        async (dir) => {
          const entries = await readdir(at(dir), { withFileTypes: true });
          if (entries.length > MAX_ENTRIES) throw new Error(`${entries.length} entries in .agents/skills/${path}, over ${MAX_ENTRIES}`);
          return entries.map((entry): SkillFileEntry => ({ name: entry.name, kind: entry.isFile() ? 'file' : entry.isDirectory() ? 'directory' : 'unsupported' }));
        },
        { lastIsDir: true },
      ),
    read: (path) =>
      inside(
        path,
        async (dir, name) => {
          const handle = await open(at(dir, name!), READ_FLAGS);
          try {
            const info = await handle.stat();
            if (!info.isFile()) throw new Error(`${path} is not a regular file`);
            if (info.size > maxFileBytes) throw new Error(`${path} is ${info.size} bytes, over ${maxFileBytes}`);
            // One byte more than the size seen: a file that grew meanwhile is refused, never read past the bound.
            const buffer = Buffer.alloc(info.size + 1);
            const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
            if (bytesRead > info.size) throw new Error(`${path} changed while it was read`);
            return new Uint8Array(buffer.buffer, buffer.byteOffset, bytesRead);
          } finally {
            await handle.close();
          }
        },
        { lastIsDir: false },
      ),
  };
}
