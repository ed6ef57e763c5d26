import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { bubblewrapArgs, commandEnvironment, sandboxShell, type SandboxStatus } from './sandbox.js';
import { linkFilter } from './seccomp-links.js';
import { WorkspaceError } from './workspace-error.js';

export interface CommandResult {
  exitCode: number | null;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  /** Bytes dropped beyond the capture limit, per stream. */
  droppedBytes: number;
}

export interface CommandOptions {
  workspaceRoot: string;
  sandbox: SandboxStatus;
  timeoutMs: number;
  captureBytes: number;
  /** RLIMIT_FSIZE: no file the command writes grows beyond this. */
  maxFileBytes: number;
  /** RLIMIT_NPROC (the kernel exempts root: a root service runs commands as SANDBOX_UID). */
  maxProcesses: number;
  /** RLIMIT_DATA (each process's heap and private memory) and the size of the sandbox's /tmp. */
  maxMemoryBytes: number;
  /** The workspace bound read-only: the command can read it and change nothing (it runs without approval). */
  readOnlyWorkspace?: boolean;
  signal: AbortSignal;
}

/** The resource limits of everything run in the sandbox: commands and sandboxed MCP servers alike. */
export type SandboxLimits = Pick<CommandOptions, 'maxFileBytes' | 'maxProcesses' | 'maxMemoryBytes'>;

/**
 * Resource limits set by the shell before the command runs (inherited by everything it starts).
 * `ulimit -f` counts 512-byte blocks, `-d` KiB; dash names the process limit `-p`, bash `-u`. RLIMIT_DATA,
 * not RLIMIT_AS: runtimes such as V8 reserve far more address space than they use and would not start.
 */
export function withLimits(command: string, options: SandboxLimits): string {
  const blocks = Math.max(0, Math.floor(options.maxFileBytes / 512));
  const kib = Math.max(1, Math.floor(options.maxMemoryBytes / 1024));
  return `ulimit -f ${blocks}; ulimit -d ${kib}; ulimit -u ${options.maxProcesses} 2>/dev/null || ulimit -p ${options.maxProcesses} 2>/dev/null; ${command}`;
}

/** The conventional exit status of a command killed by its time limit. */
export const TIMEOUT_EXIT_CODE = 124;

/**
 * Runs `sh -c command` in its own process group, under bubblewrap when available. A timeout or an
 * abort kills the whole group; under bubblewrap the PID namespace dies with it, so nothing survives.
 */
export function runCommand(command: string, options: CommandOptions): Promise<CommandResult> {
  if (options.sandbox.mode === 'disabled') return Promise.reject(new WorkspaceError('sandbox_unavailable', options.sandbox.detail));
  if (options.readOnlyWorkspace && options.sandbox.mode !== 'bubblewrap') {
    const detail = 'a command that runs without approval needs the workspace read-only, which only the bubblewrap sandbox gives (workspace.sandbox is none)';
    return Promise.reject(new WorkspaceError('sandbox_unavailable', detail));
  }
  const env = commandEnvironment(options.workspaceRoot);
  const script = withLimits(command, options);
  const sandboxed = options.sandbox.mode === 'bubblewrap';
  // Hard links fail with EXDEV (seccomp-links.ts): the quota could not take back a new name of an old file.
  const filter = sandboxed ? linkFilter() : null;
  const [file, args] = sandboxed
    ? [
        'bwrap',
        [
          '--json-status-fd',
          '3',
          ...(filter ? ['--seccomp', '4'] : []),
          ...bubblewrapArgs(options.workspaceRoot, options.maxMemoryBytes, [], !options.readOnlyWorkspace),
          ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
          ...sandboxShell(script),
        ],
      ]
    : ['/bin/sh', ['-c', script]];
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.workspaceRoot,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', sandboxed ? 'pipe' : 'ignore', filter ? 'pipe' : 'ignore'],
    }) as ChildProcessByStdio<null, Readable, Readable>;
    // bwrap reads the filter to its end before it starts the command (a bwrap that failed first reads nothing: EPIPE).
    if (filter) (child.stdio[4] as Writable).on('error', () => undefined).end(filter);
    const sandboxInit = sandboxed ? watchSandboxInit(child.stdio[3] as Readable) : null;
    const stdout = new CappedBuffer(options.captureBytes);
    const stderr = new CappedBuffer(options.captureBytes);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    let timedOut = false;
    let cancelled = false;
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      killGroup();
    };
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      reject(new WorkspaceError('sandbox_unavailable', `cannot start the command: ${error.message}`));
    });
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      child.stdout.destroy();
      child.stderr.destroy();
      (child.stdio[3] as Readable | null)?.destroy();
      resolve({
        exitCode: timedOut ? TIMEOUT_EXIT_CODE : (code ?? (signal ? 128 + signalNumber(signal) : null)),
        timedOut,
        cancelled,
        durationMs: Date.now() - started,
        stdout: stdout.text(),
        stderr: stderr.text(),
        droppedBytes: stdout.dropped + stderr.dropped,
      });
    };
    // 'close' can wait forever on pipes held by a daemonised grandchild; 'exit' plus a short drain cannot.
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      killGroup();
      // bwrap is gone; the sandbox's init dies with it and takes its whole PID namespace along, a
      // moment later. The command is over only once nothing of it is left.
      void namespaceGone(sandboxInit?.pid ?? null).then(() => setTimeout(() => finish(code, signal), 50));
    });
  });
}

/** The host PID of the sandbox's init, which bwrap reports as JSON on its status descriptor. */
function watchSandboxInit(status: Readable): { pid: number | null } {
  const init: { pid: number | null } = { pid: null };
  let text = '';
  status.on('data', (chunk: Buffer) => {
    if (init.pid !== null) return;
    text += chunk.toString();
    const match = /"child-pid":\s*(\d+)/.exec(text);
    if (match) init.pid = Number(match[1]);
  });
  return init;
}

/**
 * Resolves once the sandbox's init is gone (no /proc entry, or a zombie): the kernel ends a PID
 * namespace's init only after every other process in it has exited. Bounded, so a stuck exit (or a
 * reused PID) delays the result by at most two seconds.
 */
async function namespaceGone(initPid: number | null): Promise<void> {
  if (initPid === null) return;
  for (const deadline = Date.now() + 2000; Date.now() < deadline;) {
    const stat = await readFile(`/proc/${initPid}/stat`, 'utf8').catch(() => null);
    if (stat === null || /\) [ZX] /.test(stat)) return;
    await new Promise((done) => setTimeout(done, 10));
  }
}

class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  dropped = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    const room = this.cap - this.size;
    if (room > 0) {
      const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.chunks.push(kept);
      this.size += kept.length;
    }
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

const SIGNALS: Record<string, number> = { SIGKILL: 9, SIGTERM: 15, SIGINT: 2, SIGSEGV: 11, SIGABRT: 6 };
const signalNumber = (signal: NodeJS.Signals) => SIGNALS[signal] ?? 0;
