import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { runCommand, type CommandResult } from './command-runner.js';
import { resolveSandbox, type SandboxStatus } from './sandbox.js';
import { SessionWorkspaces, type SessionFiles } from './session-workspaces.js';
import { WorkspaceFiles } from './workspace-files.js';
import { WorkspacePaths } from './workspace-paths.js';
import { diskUsage } from './workspace-usage.js';

const SWEEP_EVERY_MS = 3_600_000;

export interface WorkspaceCommandResult extends CommandResult {
  /** The bytes the workspace holds after the command when that is past its quota; null otherwise. */
  overQuota: number | null;
}

/** The configured workspace: per-session confined paths, the file tools, sandboxed commands, retention. */
@Injectable()
export class WorkspaceService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(WorkspaceService.name);
  private sessions!: SessionWorkspaces;
  private sweeper: NodeJS.Timeout | null = null;
  sandbox!: SandboxStatus;

  constructor(
    private readonly config: AppConfig,
    readonly files: WorkspaceFiles,
  ) {}

  async onModuleInit(): Promise<void> {
    const rootPaths = await WorkspacePaths.open(this.config.workspace.root);
    this.sessions = await SessionWorkspaces.open(rootPaths, this.config.workspace);
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
   * exceed the room left under the quota; several files together can, which is reported afterwards.
   */
  async run(paths: WorkspacePaths, command: string, signal: AbortSignal): Promise<WorkspaceCommandResult> {
    const { commandTimeoutMs, captureBytes, maxFileBytes, maxProcesses } = this.config.workspace;
    const room = paths.maxBytes === null ? maxFileBytes : Math.max(512, paths.maxBytes - (await diskUsage(paths.root)));
    const result = await runCommand(command, {
      workspaceRoot: paths.root,
      sandbox: this.sandbox,
      timeoutMs: commandTimeoutMs,
      captureBytes,
      maxFileBytes: Math.min(maxFileBytes, room),
      maxProcesses,
      signal,
    });
    const used = paths.maxBytes === null ? 0 : await diskUsage(paths.root);
    return { ...result, overQuota: paths.maxBytes !== null && used > paths.maxBytes ? used : null };
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
