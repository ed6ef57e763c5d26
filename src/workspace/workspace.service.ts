import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { runCommand, type CommandResult } from './command-runner.js';
import { resolveSandbox, type SandboxStatus } from './sandbox.js';
import { WorkspaceFiles } from './workspace-files.js';
import { WorkspacePaths } from './workspace-paths.js';

/** The configured workspace: its confined paths, its file tools, and sandboxed commands. */
@Injectable()
export class WorkspaceService implements OnModuleInit {
  private readonly logger = new Logger(WorkspaceService.name);
  private paths!: WorkspacePaths;
  sandbox!: SandboxStatus;

  constructor(
    private readonly config: AppConfig,
    readonly files: WorkspaceFiles,
  ) {}

  async onModuleInit(): Promise<void> {
    this.paths = await WorkspacePaths.open(this.config.workspace.root);
    this.sandbox = resolveSandbox(this.config.workspace.sandbox, this.paths.root);
    const log = this.sandbox.mode === 'disabled' ? 'warn' : 'log';
    this.logger[log](`workspace ${this.paths.root}; commands: ${this.sandbox.detail}`);
  }

  get root(): WorkspacePaths {
    return this.paths;
  }

  get commandsEnabled(): boolean {
    return this.sandbox.mode !== 'disabled';
  }

  run(command: string, signal: AbortSignal): Promise<CommandResult> {
    const { commandTimeoutMs, captureBytes, maxFileBytes, maxProcesses } = this.config.workspace;
    return runCommand(command, {
      workspaceRoot: this.paths.root,
      sandbox: this.sandbox,
      timeoutMs: commandTimeoutMs,
      captureBytes,
      maxFileBytes,
      maxProcesses,
      signal,
    });
  }
}
