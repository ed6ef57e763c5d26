import { Injectable } from '@nestjs/common';
import type { Tool } from 'ollama';
import { cutText } from '../common/cut-text.js';
import { AppConfig } from '../config/app-config.js';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { FileChange } from '../workspace/workspace-files.js';
import type { AgentImage } from './agent-runner.js';
import { WorkspaceError } from '../workspace/workspace-error.js';
import type { WorkspacePaths } from '../workspace/workspace-paths.js';
import { WorkspaceService } from '../workspace/workspace.service.js';
import { excerpt } from './output-excerpt.js';
import { COMMAND_TOOL, FILE_TOOLS } from './tool-definitions.js';
import type { OfferedTool, ToolCallContext, ToolResult, ToolSource, ToolStep } from './core/tool-source.js';
import { changeRequest, commandRequest, fileHash } from './workspace-person-requests.js';
import type { TaskWorkspace } from './task-workspace.js';

const COMMAND_OUTPUT_IN_TRACE = 4000;
const IMAGE_EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

export type { TaskWorkspace } from './task-workspace.js';

const EFFECTS: Record<string, Pick<OfferedTool, 'effect' | 'stepKind'>> = {
  write_file: { effect: 'change', stepKind: 'file_op' },
  edit_file: { effect: 'change', stepKind: 'file_op' },
  run_command: { effect: 'command', stepKind: 'command' },
};

/** The workspace tools (`workspace`): they run the model's calls against the session's files and sandbox, and describe each call's trace step (the executor records it). */
@Injectable()
export class WorkspaceToolbox implements ToolSource {
  readonly id = 'workspace';

  constructor(
    private readonly workspace: WorkspaceService,
    private readonly config: AppConfig,
  ) {}

  /** The tools offered to the model, the same for every caller; run_command only when commands can run safely. */
  async tools(): Promise<OfferedTool[]> {
    const definitions = this.workspace.commandsEnabled ? [...FILE_TOOLS, COMMAND_TOOL] : FILE_TOOLS;
    return definitions.map((definition) => this.offered(definition));
  }

  /** A tool with what a person is asked about its calls: a command line, or a file change's diff (and, at resume, whether the file is still the one shown). */
  private offered(definition: Tool): OfferedTool {
    const tool: OfferedTool = { definition, ...(EFFECTS[definition.function.name!] ?? { effect: 'read', stepKind: 'tool_call' }) };
    if (tool.effect === 'command') return { ...tool, personRequest: async (call, _context, policy) => commandRequest(call, policy) };
    if (tool.effect === 'read') return tool;
    const preview = (call: ChatToolCall, context: ToolCallContext) => this.preview(context.workspace.paths, call.function.name, call.function.arguments);
    return {
      ...tool,
      personRequest: async (call, context, policy) => (policy.mode === 'changes' ? changeRequest(await preview(call, context), policy) : null),
      stillApplies: async (call, baseSha256, context) => {
        const now = await preview(call, context);
        return now !== null && fileHash(now.before) === baseSha256;
      },
    };
  }

  /**
   * Opens the Task's workspace and writes its image inputs there (`.inputs/<task_id>/1.png`…), so the
   * tools can open them; they count towards the session's quota like any file.
   */
  async open(task: { id: string; sessionId: string; images: AgentImage[] }): Promise<TaskWorkspace> {
    const paths = await this.workspace.forTask(task.sessionId);
    for (const [index, image] of task.images.entries()) {
      await this.workspace.files.writeFile(paths, `.inputs/${task.id}/${index + 1}.${IMAGE_EXTENSIONS[image.mimeType] ?? 'bin'}`, image.data);
    }
    return { sessionId: task.sessionId, paths };
  }

  async execute(call: ChatToolCall, context: ToolCallContext): Promise<ToolResult> {
    const { name, arguments: args } = call.function;
    await this.workspace.touch(context.workspace.sessionId);
    try {
      if (name === 'run_command') return await this.command(context, typeof args.command === 'string' ? args.command : '');
      const { output, change } = await this.file(context.workspace.paths, name, args);
      const detail = { arguments: summarize(args), ...(change ? { path: change.path, bytes: change.bytes, created: change.created } : {}) };
      return { output: excerpt(output, this.config.agent.toolOutputChars), change, step: { kind: change ? 'file_op' : 'tool_call', detail } };
    } catch (error) {
      if (!(error instanceof WorkspaceError)) throw error;
      const step: ToolStep = { kind: 'tool_call', outcome: error.code === 'path_denied' ? 'denied' : 'error', detail: { arguments: summarize(args), error: error.message } };
      return { output: `Error: ${error.message}`, isError: true, step };
    }
  }

  /**
   * What `write_file` / `edit_file` would make of its file, for a person to approve: null when the
   * call cannot apply (an edit whose text does not occur exactly once fails and changes nothing).
   */
  private async preview(paths: WorkspacePaths, name: string, args: Record<string, unknown>): Promise<{ path: string; before: string | null; after: string } | null> {
    const path = args.path;
    if (typeof path !== 'string') return null;
    const before = await this.workspace.files.readText(paths, path).catch(() => null);
    if (name === 'write_file') return typeof args.content === 'string' ? { path, before, after: args.content } : null;
    const { old_text: oldText, new_text: newText } = args;
    if (before === null || typeof oldText !== 'string' || typeof newText !== 'string' || oldText === '') return null;
    if (before.split(oldText).length !== 2) return null;
    return { path, before, after: before.replace(oldText, () => newText) };
  }

  private async file(paths: WorkspacePaths, name: string, args: Record<string, unknown>): Promise<{ output: string; change?: FileChange }> {
    const files = this.workspace.files;
    const text = (key: string) => {
      const value = args[key];
      if (typeof value !== 'string') throw new WorkspaceError('invalid', `${key}: a string is required`);
      return value;
    };
    const optionalText = (key: string) => (typeof args[key] === 'string' ? args[key] : undefined);
    const optionalInt = (key: string) => (typeof args[key] === 'number' ? args[key] : undefined);
    switch (name) {
      case 'list_dir':
        return { output: await files.listDir(paths, optionalText('path')) };
      case 'read_file':
        return { output: await files.readFile(paths, text('path'), optionalInt('start_line'), optionalInt('end_line')) };
      case 'write_file': {
        const change = await files.writeFile(paths, text('path'), text('content'));
        return { output: `${change.created ? 'Created' : 'Wrote'} ${change.path} (${change.bytes} bytes)`, change };
      }
      case 'edit_file': {
        const change = await files.editFile(paths, text('path'), text('old_text'), text('new_text'));
        return { output: `Edited ${change.path} (${change.bytes} bytes)`, change };
      }
      case 'glob':
        return { output: await files.glob(paths, text('pattern')) };
      case 'grep':
        return { output: await files.grep(paths, text('pattern'), optionalText('path')) };
      default:
        throw new WorkspaceError('invalid', `unknown tool: ${name}`);
    }
  }

  private async command({ workspace, signal, unapproved }: ToolCallContext, command: string): Promise<ToolResult> {
    if (command.trim() === '') throw new WorkspaceError('invalid', 'command: must not be empty');
    const result = await this.workspace.run(workspace.paths, command, signal, { readOnly: unapproved === true });
    const combined = [result.stdout, result.stderr && `[stderr]\n${result.stderr}`].filter(Boolean).join('\n');
    const step: ToolStep = {
      kind: 'command',
      name: command,
      outcome: result.cancelled ? 'cancelled' : result.timedOut ? 'timeout' : result.exitCode === 0 && result.overLimit === null ? 'ok' : 'error',
      detail: {
        command,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        durationMs: result.durationMs,
        sandbox: this.workspace.sandbox.mode,
        ...(unapproved ? { workspace: 'read-only' } : {}),
        output: excerpt(combined, COMMAND_OUTPUT_IN_TRACE),
        droppedBytes: result.droppedBytes,
        ...(result.overQuota !== null ? { overQuotaBytes: result.overQuota } : {}),
      },
    };
    const status = result.timedOut ? `timed out after ${this.config.workspace.commandTimeoutMs} ms (exit code ${result.exitCode})` : `exit code ${result.exitCode}`;
    const dropped = result.droppedBytes > 0 ? `\n[${result.droppedBytes} more bytes of output were not captured]` : '';
    const output = `${status}\n${excerpt(combined, this.config.agent.toolOutputChars)}${dropped}`.trimEnd();
    // The command ran; what it left behind is over the quota, so the call fails and further writes are refused.
    if (result.overLimit !== null) return { output: `Error: after this command ${result.overLimit}\n${output}`, isError: true, step };
    return { output, step };
  }
}

/** Argument summary for the trace: long strings (file contents) are cut. */
function summarize(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).map(([key, value]) => [key, typeof value === 'string' ? cutText(value, 200, { mark: 'chars' }) : value]));
}
