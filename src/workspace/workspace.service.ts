import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Clock, SYSTEM_CLOCK } from '../common/clock.js';
import { AppConfig } from '../config/app-config.js';
import { runCommand, type CommandResult } from './command-runner.js';
import { resolveSandbox, type SandboxStatus } from './sandbox.js';
import { SessionWorkspaces, type SessionFiles } from './session-workspaces.js';
import { WorkspaceFiles } from './workspace-files.js';
import { WorkspacePaths } from './workspace-paths.js';
import { QuotaWatch } from './quota-watch.js';
import { cutBackGrown, fileClockNow, remeasure, removeBornSince, usageOf, usageOverLimit } from './workspace-usage.js';

const SWEEP_EVERY_MS = 3_600_000;

export interface WorkspaceCommandResult extends CommandResult {
  /** The bytes the workspace holds after the command when that is past its quota; null otherwise. */
  overQuota: number | null;
  /** Why the workspace is over a limit after the command (bytes or files), for the model; null when it is not. */
  overLimit: string | null;
}

/** What a shell or a program says when a write passed RLIMIT_FSIZE, and the exit status of one killed by SIGXFSZ. */
const FILE_TOO_LARGE = /File size limit exceeded|File too large|EFBIG/;
const SIGXFSZ_EXIT = 128 + 25;
/** What a command's stderr says when it ran out of memory (Python, glibc/strerror, Node, C++ runtimes). */
const OUT_OF_MEMORY = /MemoryError|Cannot allocate memory|out of memory|std::bad_alloc|ENOMEM|heap out of memory/i;

/** The configured workspace: per-session confined paths, the file tools, sandboxed commands, retention. */
@Injectable()
export class WorkspaceService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(WorkspaceService.name);
  private sessions!: SessionWorkspaces;
  private sweeper: NodeJS.Timeout | null = null;
  private watchWarned = false;
  sandbox!: SandboxStatus;

  constructor(
    private readonly config: AppConfig,
    readonly files: WorkspaceFiles,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  async onModuleInit(): Promise<void> {
    const rootPaths = await WorkspacePaths.open(this.config.workspace.root);
    this.sessions = await SessionWorkspaces.open(rootPaths, this.config.workspace, this.clock);
    this.sandbox = resolveSandbox(this.config.workspace.sandbox, rootPaths.root);
    const log = this.sandbox.mode === 'disabled' ? 'warn' : 'log';
    this.logger[log](`workspace ${rootPaths.root} (isolation: ${this.config.workspace.isolation}); commands: ${this.sandbox.detail}`);
    if (this.config.workspace.retentionDays > 0) {
      await this.sweep();
      this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS).unref();
    }
  }

  onModuleDestroy(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  get commandsEnabled(): boolean {
    return this.sandbox.mode !== 'disabled';
  }

  /** The workspace of a Task: its session's own directory (created on first use), or the shared root. */
  forTask(sessionId: string): Promise<WorkspacePaths> {
    return this.sessions.forTask(sessionId);
  }

  /** A session's files for readers, without creating anything. */
  forReading(sessionId: string): Promise<SessionFiles> {
    return this.sessions.forReading(sessionId);
  }

  touch(sessionId: string): Promise<void> {
    return this.sessions.touch(sessionId);
  }

  /**
   * Runs a command confined to `paths` (the sandbox binds only that directory). No file it writes may
   * exceed the room left under the quota. A command that leaves the workspace past a limit (several files
   * together, too many files) fails, and what it made is taken back (every entry born while it ran), so
   * the limits hold from one command to the next. While the workspace is over a limit a command may
   * only make room: it runs unable to write a byte (RLIMIT_FSIZE 0), and whatever it creates is taken
   * back (otherwise a session over its quota could never be cleaned up: there is no delete tool). While
   * it runs, a watch stops the command once the workspace holds more than a limit (quota-watch.ts), so
   * the disk is not filled until the timeout. The cost is one file-clock reading and one watch set-up
   * per command; the walk that takes things back runs only past a limit. Hard links fail (seccomp-links.ts).
   * `readOnly`: the workspace is bound read-only (a command that runs without a person's approval).
   */
  async run(paths: WorkspacePaths, command: string, signal: AbortSignal, { readOnly = false } = {}): Promise<WorkspaceCommandResult> {
    const { commandTimeoutMs, captureBytes, maxFileBytes, maxProcesses, maxMemoryBytes } = this.config.workspace;
    const before = await usageOf(paths);
    const marks = paths.marks;
    const already = usageOverLimit(paths, before);
    const room = already ? 0 : paths.maxBytes === null ? maxFileBytes : Math.max(512, paths.maxBytes - before.bytes);
    const limited = paths.maxBytes !== null || paths.limits.maxFiles !== null;
    const since = limited ? await fileClockNow() : null;
    // While it runs, the command is stopped once the workspace holds more than a limit (quota-watch.ts).
    const quota = new AbortController();
    const stoppedFor: { why: string | null } = { why: null };
    // Not while already over: such a command may only delete, and a clean-up in several steps must not be stopped halfway.
    const watch = limited && !readOnly && !already ? await this.watchQuota(paths, before, (why) => ((stoppedFor.why = why), quota.abort())) : null;
    const outcome = await runCommand(command, {
      workspaceRoot: paths.root,
      sandbox: this.sandbox,
      timeoutMs: commandTimeoutMs,
      captureBytes,
      maxFileBytes: Math.min(maxFileBytes, room),
      maxProcesses,
      maxMemoryBytes,
      readOnlyWorkspace: readOnly,
      signal: AbortSignal.any([signal, quota.signal]),
    }).finally(() => watch?.close());
    const result = { ...outcome, cancelled: signal.aborted };
    let after = await remeasure(paths);
    const left = usageOverLimit(paths, after, 'would hold');
    const removed = left && since !== null ? await removeBornSince(paths.root, since) : 0;
    if (removed > 0) after = await remeasure(paths);
    // Still over: files that existed before grew (each up to the room left); their growth goes too.
    const grown = usageOverLimit(paths, after) && since !== null && marks && paths.marks ? await cutBackGrown(paths.root, marks, paths.marks, since) : 0;
    if (grown > 0) after = await remeasure(paths);
    const stillOver = usageOverLimit(paths, after);
    const cleaned = already !== null && after.bytes < before.bytes && after.entries <= before.entries;
    const cutNote = grown > 0 ? `; the ${grown} files that existed before and grew were cut back to their size before the command` : '';
    const takenBack = `${removed > 0 ? `; the ${removed} files and directories this command created were removed` : ''}${cutNote}`;
    // Stopped or not (the watch may fire as the command ends), the message starts the same: what is over, what was taken back.
    const stopped = stoppedFor.why === null ? '' : '; the command was stopped while it ran, once the workspace held more than a limit';
    const problem = already
      ? cleaned || !stillOver
        ? null
        : `${stillOver}; while it is over, a command may only delete files${takenBack}${stopped}`
      : left || stoppedFor.why
        ? `${stillOver ?? left ?? stoppedFor.why}${takenBack}${stopped}`
        : null;
    const overQuota = paths.maxBytes !== null && after.bytes > paths.maxBytes ? after.bytes : null;
    // The model reads stderr: say which limit it ran into, so it does not retry the same thing blindly.
    const memoryNote =
      result.exitCode !== 0 && !result.timedOut && OUT_OF_MEMORY.test(result.stderr)
        ? `\n[the command ran out of memory: each process may use at most ${maxMemoryBytes} bytes (workspace.max_memory_bytes)]`
        : '';
    const fileNote =
      FILE_TOO_LARGE.test(result.stderr) || result.exitCode === SIGXFSZ_EXIT
        ? `\n[a file reached the most one file may hold now: ${Math.min(maxFileBytes, room)} bytes (workspace.max_file_bytes, or the room left under workspace.max_session_bytes)]`
        : '';
    return { ...result, stderr: result.stderr + memoryNote + fileNote, overQuota, overLimit: problem };
  }

  /** The quota's watch for one command; when it cannot start, the command is bounded when it ends only (said once). */
  private async watchQuota(...args: Parameters<typeof QuotaWatch.start>): Promise<QuotaWatch | null> {
    const watch = await QuotaWatch.start(...args);
    if (!watch && !this.watchWarned) {
      this.watchWarned = true;
      this.logger.warn('the quota watch could not start (inotify watches: fs.inotify.max_user_watches?): commands are held to the session quota when they end, not while they run');
    }
    return watch;
  }

  private async sweep(): Promise<void> {
    try {
      const removed = await this.sessions.sweep();
      if (removed.length > 0) this.logger.log(`removed ${removed.length} session workspace(s) idle for ${this.config.workspace.retentionDays} day(s)`);
    } catch (error) {
      this.logger.warn(`workspace retention sweep failed: ${(error as Error).message}`);
    }
  }
}
