import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceFiles } from '../../src/workspace/workspace-files.js';
import { WorkspacePaths } from '../../src/workspace/workspace-paths.js';

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('workspace path confinement (T3.1 to T3.4)', () => {
  const base = mkdtempSync(join(tmpdir(), 'oam-ws-'));
  const root = join(base, 'proj');
  const outside = join(base, 'outside');
  const files = new WorkspaceFiles();
  let paths: WorkspacePaths;

  beforeAll(async () => {
    mkdirSync(root);
    mkdirSync(outside);
    mkdirSync(join(base, 'proj-evil'));
    writeFileSync(join(base, 'proj-evil', 'x'), 'evil');
    writeFileSync(join(outside, 'secret'), 'outside secret');
    writeFileSync(join(root, 'inside.txt'), 'line 1\nline 2\nline 3\n');
    symlinkSync(join(outside, 'secret'), join(root, 'leak'));
    symlinkSync(outside, join(root, 'dir'));
    symlinkSync(join(outside, 'newfile'), join(root, 'new'));
    symlinkSync(join(root, 'inside.txt'), join(root, 'alias'));
    linkSync(join(outside, 'secret'), join(root, 'hardlink'));
    mkdirSync(join(root, '.git'));
    paths = await WorkspacePaths.open(root);
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const escapes = ['../outside/secret', '../../etc/passwd', '/etc/passwd', 'a\0b', '..\\..\\etc\\passwd', '../proj-evil/x', '../proj2/x', 'sub/../../outside/secret'];

  it.each(escapes)('T3.1/T3.2: refuses %j for read, list and write', async (path) => {
    await expect(files.readFile(paths, path)).rejects.toThrow(/refused|no such file/);
    await expect(files.listDir(paths, path)).rejects.toThrow(/refused|no such file/);
    await expect(files.writeFile(paths, path, 'x')).rejects.toThrow(/refused/);
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('outside secret');
    expect(readFileSync(join(base, 'proj-evil', 'x'), 'utf8')).toBe('evil');
  });

  it('treats %2e%2e and ~ literally (no decoding, no home expansion)', async () => {
    await expect(files.readFile(paths, '%2e%2e/outside/secret')).rejects.toThrow(/no such file/);
    await expect(files.readFile(paths, '~/.ssh/id_rsa')).rejects.toThrow(/no such file/);
  });

  it('T3.3: refuses reads and writes through symlinks that lead out, and creates nothing outside', async () => {
    const before = sha(join(outside, 'secret'));
    await expect(files.readFile(paths, 'leak')).rejects.toThrow(/resolves outside/);
    await expect(files.readFile(paths, 'dir/secret')).rejects.toThrow(/resolves outside/);
    await expect(files.listDir(paths, 'dir')).rejects.toThrow(/resolves outside/);
    await expect(files.writeFile(paths, 'leak', 'pwned')).rejects.toThrow(/symbolic link/);
    await expect(files.writeFile(paths, 'dir/secret', 'pwned')).rejects.toThrow(/resolves outside/);
    await expect(files.writeFile(paths, 'dir/created', 'pwned')).rejects.toThrow(/resolves outside/);
    await expect(files.writeFile(paths, 'new', 'pwned')).rejects.toThrow(/symbolic link/);
    await expect(files.editFile(paths, 'leak', 'outside', 'x')).rejects.toThrow(/resolves outside/);
    expect(sha(join(outside, 'secret'))).toBe(before);
    expect(existsSync(join(outside, 'newfile'))).toBe(false);
    expect(existsSync(join(outside, 'created'))).toBe(false);
  });

  it('T3.4: refuses to write a file that has other hard links', async () => {
    await expect(files.writeFile(paths, 'hardlink', 'pwned')).rejects.toThrow(/hard links/);
    expect(readFileSync(join(outside, 'secret'), 'utf8')).toBe('outside secret');
  });

  it('keeps .git read-only for the file tools', async () => {
    await expect(files.writeFile(paths, '.git/hooks/pre-commit', '#!/bin/sh')).rejects.toThrow(/\.git\/ is read-only/);
  });

  it('follows symlinks that stay inside, reads line ranges, writes atomically and edits exact text once', async () => {
    expect(await files.readFile(paths, 'alias', 2, 3)).toBe('2\tline 2\n3\tline 3');
    const created = await files.writeFile(paths, 'src/new.txt', 'hello world');
    expect(created).toEqual({ path: 'src/new.txt', bytes: 11, created: true });
    expect(await files.editFile(paths, 'src/new.txt', 'world', 'there')).toMatchObject({ path: 'src/new.txt', created: false });
    expect(readFileSync(join(root, 'src/new.txt'), 'utf8')).toBe('hello there');
    await expect(files.editFile(paths, 'inside.txt', 'line', 'x')).rejects.toThrow(/occurs 3 times/);
    expect(await files.glob(paths, '**/*.txt')).toBe('inside.txt\nsrc/new.txt');
    expect(await files.grep(paths, 'line [23]')).toBe('inside.txt:2: line 2\ninside.txt:3: line 3');
  });
});
