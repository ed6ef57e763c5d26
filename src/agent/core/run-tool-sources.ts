import type { ToolCaller, ToolSource } from './tool-source.js';

/**
 * The tool sources a run gets beyond the workspace's and the core's own (each configured MCP server,
 * issue 22), for its caller. An abstract class so that it is a DI token: the agent depends on this seam
 * only, and the composition root binds it to the MCP client's provider (no agent → mcp-client import).
 */
export abstract class RunToolSources {
  /** `workspaceRoot`: the run's session workspace (null in direct mode), for sources that read it (a session's own skills). */
  abstract forCaller(caller: ToolCaller, workspaceRoot?: string | null): Promise<ToolSource[]>;
}
