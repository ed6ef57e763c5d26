import { CommandAllowlist } from './command-pattern.js';

export type ApprovalMode = 'never' | 'commands' | 'changes';

/** The tools that change files; `changes` mode asks before each of them. */
const CHANGE_TOOLS = new Set(['write_file', 'edit_file']);

/** `agent.approvals`: which tool calls wait for a person. */
export class ApprovalPolicy {
  private readonly allowlist: CommandAllowlist;

  constructor(
    readonly mode: ApprovalMode,
    allow: readonly string[],
  ) {
    this.allowlist = new CommandAllowlist(allow);
  }

  requires(tool: string, args: Record<string, unknown>): boolean {
    if (this.mode === 'never') return false;
    if (tool === 'run_command') {
      const command = typeof args.command === 'string' ? args.command : '';
      // An empty command is refused by the toolbox without running anything.
      return command.trim() !== '' && !this.allowlist.allows(command);
    }
    return this.mode === 'changes' && CHANGE_TOOLS.has(tool);
  }
}
