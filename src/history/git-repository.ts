import { spawn } from 'node:child_process';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Every setting a repository's or user's configuration could use to run a program, read the work tree
 * or change bytes is pinned here, on the command line, which overrides any config file. The history
 * repository is bare and git is never given a work tree: files reach it only as data on stdin, so a
 * `.git`, `.gitattributes` or `.gitignore` the agent plants in its workspace is never read by git.
 */
const PINNED_CONFIG = [
  'core.fsmonitor=false',
  'core.hooksPath=/dev/null',
  'core.attributesFile=/dev/null',
  'core.excludesFile=/dev/null',
  'core.autocrlf=false',
  'core.safecrlf=false',
  // Every blob streamed straight into the pack: no delta search against the previous blob (a first checkpoint
  // of 10 000 files / 200 MiB: 40 % less CPU in fast-import). Diffs are rendered here, never by git.
  'core.bigFileThreshold=1',
  'core.compression=1',
  // A checkpoint's objects stay one pack (HistoryBound folds packs past MAX_PACKS): below this limit
  // fast-import would unpack them into loose objects through one more process, `git unpack-objects`.
  'fastimport.unpackLimit=0',
  'pack.compression=1',
  'gc.auto=0',
  'gc.autoDetach=false',
  'diff.renames=false',
  'maintenance.auto=false',
  'protocol.allow=never',
].flatMap((setting) => ['-c', setting]);

const GIT_PATH = '/usr/local/bin:/usr/bin:/bin';

export class GitError extends Error {}

export interface GitRun {
  stdout: Buffer;
  stderr: string;
}

/**
 * One history repository (bare, service-owned, under `history.dir`), driven by the git CLI with a clean
 * environment: no system or global configuration, no attributes, no hooks, no replace refs, no prompts.
 */
export class GitRepository {
  constructor(readonly dir: string) {}

  /**
   * Creates the bare repository once; its info/attributes makes every path plain bytes, whatever a tree holds.
   * True when this call created it.
   */
  async ensure(): Promise<boolean> {
    if (await stat(join(this.dir, 'HEAD')).catch(() => null)) return false;
    await mkdir(this.dir, { recursive: true });
    await this.git(['init', '--quiet', '--bare', '--template=', this.dir], { bare: false });
    await mkdir(join(this.dir, 'info'), { recursive: true });
    await writeFile(join(this.dir, 'info', 'attributes'), '* -text -eol -crlf -filter -ident -working-tree-encoding !diff !merge\n');
    return true;
  }

  /** Runs git on this repository; stdin is written whole, stdout is capped at `maxOutput` bytes. */
  async git(args: string[], options: { input?: Buffer | string; maxOutput?: number; bare?: boolean } = {}): Promise<GitRun> {
    const env = this.environment(options.bare !== false);
    const maxOutput = options.maxOutput ?? 64 * 1024 * 1024;
    return new Promise<GitRun>((resolve, reject) => {
      const child = spawn('git', [...PINNED_CONFIG, ...args], { env, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let outBytes = 0;
      let err = '';
      let overflow = false;
      child.stdout.on('data', (chunk: Buffer) => {
        outBytes += chunk.length;
        if (outBytes > maxOutput) {
          overflow = true;
          child.kill('SIGKILL');
        } else out.push(chunk);
      });
      child.stderr.on('data', (chunk: Buffer) => {
        if (err.length < 8192) err += chunk.toString('utf8');
      });
      child.on('error', reject);
      child.stdin.on('error', () => undefined);
      child.on('close', (code) => {
        if (overflow) return reject(new GitError(`git ${args[0]}: output over ${maxOutput} bytes`));
        if (code !== 0) return reject(new GitError(`git ${args[0]} exited ${code}: ${err.trim().slice(0, 500)}`));
        resolve({ stdout: Buffer.concat(out), stderr: err });
      });
      child.stdin.end(options.input ?? '');
    });
  }

  /**
   * What the repository's objects take on disk and how many packs hold them, read from its object folder
   * instead of a `git count-objects` after every Task (each git process costs the service a fork). The layout
   * read here, packs in objects/pack and loose objects in two-hex-digit folders, is git's for every ref format.
   */
  async objectStore(): Promise<{ bytes: number; packs: number }> {
    const objects = join(this.dir, 'objects');
    let bytes = 0;
    let packs = 0;
    for (const folder of await readdir(objects).catch(() => [] as string[])) {
      if (folder !== 'pack' && !/^[0-9a-f]{2}$/.test(folder)) continue;
      for (const name of await readdir(join(objects, folder)).catch(() => [] as string[])) {
        const info = await stat(join(objects, folder, name)).catch(() => null);
        if (!info?.isFile()) continue;
        bytes += info.size;
        if (folder === 'pack' && name.endsWith('.pack')) packs++;
      }
    }
    return { bytes, packs };
  }

  /**
   * Runs `git fast-import` on this repository, its input streamed by `produce` with backpressure (a
   * first checkpoint of a large workspace never sits in memory whole). Resolves with what fast-import
   * printed: the answers to the stream's `get-mark` commands, one line each.
   */
  async fastImport(produce: (write: (chunk: Buffer | string) => Promise<void>) => Promise<void>): Promise<string> {
    const child = spawn('git', [...PINNED_CONFIG, 'fast-import', '--quiet', '--force', '--done'], {
      env: this.environment(true),
      cwd: '/',
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let err = '';
    let out = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 8192) err += chunk.toString('utf8');
    });
    child.stdout.on('data', (chunk: Buffer) => {
      if (out.length < 8192) out += chunk.toString('utf8');
    });
    const closed = new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    child.stdin.on('error', () => undefined);
    const write = (chunk: Buffer | string) =>
      new Promise<void>((resolve) => {
        if (child.stdin.write(chunk)) resolve();
        else child.stdin.once('drain', resolve);
      });
    try {
      await produce(write);
    } catch (error) {
      child.kill('SIGKILL');
      await closed.catch(() => undefined);
      throw error;
    }
    child.stdin.end();
    const code = await closed;
    if (code !== 0) throw new GitError(`git fast-import exited ${code}: ${err.trim().slice(0, 500)}`);
    return out;
  }

  private environment(bare: boolean): Record<string, string> {
    const env: Record<string, string> = {
      PATH: GIT_PATH,
      HOME: this.dir,
      LC_ALL: 'C',
      TZ: 'UTC',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_ATTR_NOSYSTEM: '1',
      GIT_NO_REPLACE_OBJECTS: '1',
      GIT_LITERAL_PATHSPECS: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_AUTHOR_NAME: 'ollama-agent-mcp',
      GIT_AUTHOR_EMAIL: 'history@localhost',
      GIT_COMMITTER_NAME: 'ollama-agent-mcp',
      GIT_COMMITTER_EMAIL: 'history@localhost',
    };
    if (bare) env.GIT_DIR = this.dir;
    return env;
  }

  async text(args: string[]): Promise<string> {
    return (await this.git(args)).stdout.toString('utf8');
  }

  /** Objects' contents by id, one `cat-file --batch` for all of them: a blob's bytes, a commit's headers and message. */
  async objects(oids: string[]): Promise<Map<string, Buffer>> {
    const unique = [...new Set(oids)];
    const found = new Map<string, Buffer>();
    if (unique.length === 0) return found;
    const { stdout } = await this.git(['cat-file', '--batch'], { input: unique.join('\n') + '\n' });
    let at = 0;
    while (at < stdout.length) {
      const eol = stdout.indexOf(10, at);
      const header = stdout.subarray(at, eol).toString('utf8').split(' ');
      at = eol + 1;
      if (header[1] === 'missing') continue;
      const size = Number(header[2]);
      found.set(header[0], stdout.subarray(at, at + size));
      at += size + 1;
    }
    return found;
  }
}
