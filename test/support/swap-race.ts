import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/**
 * What a command in a workspace can do (finding 1 of issue 20): swap `a` and `b` by atomic
 * renameat2(RENAME_EXCHANGE), as fast as it can, for `seconds`. python3 with ctypes, since a C helper
 * cannot be compiled at test time; glibc 2.28+ has renameat2.
 */
const SWAPPER = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
os.chdir(sys.argv[1])
a, b = sys.argv[2].encode(), sys.argv[3].encode()
end = time.time() + float(sys.argv[4])
n = 0
while time.time() < end:
    if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
        sys.exit("renameat2: errno %d" % ctypes.get_errno())
    n += 1
print(n)
`;

export interface Swapper {
  child: ChildProcess;
  /** Resolves with the number of swaps made once the swapper has stopped. */
  done: Promise<number>;
}

export function startSwapper(dir: string, a: string, b: string, seconds: number): Swapper {
  const child = spawn('python3', ['-c', SWAPPER, dir, a, b, String(seconds)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const done = once(child, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`swapper failed (${code}): ${err}`);
    return Number(out.trim());
  });
  return { child, done };
}
