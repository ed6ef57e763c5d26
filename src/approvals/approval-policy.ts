import { CommandAllowlist } from './command-pattern.js';

export type ApprovalMode = 'never' | 'commands' | 'changes';

/**
 * `agent.approvals`: the mode and the command allowlist. Which call needs a person is each offered
 * tool's to say (`OfferedTool.personRequest`, ADR 0020 §3), with this policy.
 */
export class ApprovalPolicy {
  private readonly allowlist: CommandAllowlist;

  constructor(
    readonly mode: ApprovalMode,
    allow: readonly string[],
  ) {
    this.allowlist = new CommandAllowlist(allow);
  }

  commandAllowed(command: string): boolean {
    return this.allowlist.allows(command);
  }
}
