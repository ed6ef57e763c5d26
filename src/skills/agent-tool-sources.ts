import { Injectable } from '@nestjs/common';
import { RunToolSources } from '../agent/core/run-tool-sources.js';
import type { ToolCaller, ToolSource } from '../agent/core/tool-source.js';
import { AuditService } from '../audit/audit.service.js';
import { AppConfig } from '../config/app-config.js';
import { McpToolSources } from '../mcp-client/mcp-tool-sources.js';
import { SkillToolSource, type SkillLoad } from './skill-tool-source.js';
import { SkillsService } from './skills.service.js';

/**
 * The tool sources a run gets beyond the workspace's and the core's: each MCP server the caller may
 * use (or their catalog), then the caller's skills. A caller with no skill gets no skill source, so its
 * tools and its prompt are exactly what they were before skills (byte for byte).
 */
@Injectable()
export class AgentToolSources extends RunToolSources {
  constructor(
    private readonly mcp: McpToolSources,
    private readonly skills: SkillsService,
    private readonly audit: AuditService,
    private readonly config: AppConfig,
  ) {
    super();
  }

  async forCaller(caller: ToolCaller, workspaceRoot: string | null = null): Promise<ToolSource[]> {
    const [servers, skills] = await Promise.all([this.mcp.forCaller(caller), this.skills.forCaller(caller, workspaceRoot)]);
    if (skills.length === 0) return servers;
    const limits = { maxListed: this.config.skills.maxListed, outputChars: this.config.agent.toolOutputChars };
    return [...servers, new SkillToolSource(skills, limits, (load) => this.recordLoad(load))];
  }

  /** Every `skill` call, as one audit event `skill.load`; a name the caller may not use reads as not found. */
  private recordLoad(load: SkillLoad): Promise<void> {
    const actor = { user: load.caller.user, groups: load.caller.groups, admin: false, transport: 'system' as const, address: null, client: null };
    return this.audit.record({
      caller: actor,
      action: 'skill.load',
      outcome: load.outcome === 'ok' ? 'ok' : load.outcome === 'not_found' ? 'rejected' : 'error',
      taskId: load.taskId,
      sessionId: load.sessionId,
      detail: {
        skill: load.skill,
        file: load.file,
        origin: load.origin,
        result: load.outcome,
        ...(load.bytes !== undefined ? { bytes: load.bytes } : {}),
        ...(load.error ? { error: load.error } : {}),
      },
    });
  }
}
