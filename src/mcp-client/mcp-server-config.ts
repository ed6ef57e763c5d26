import type { AgentConfig } from '../config/agent-config.js';

/** One entry of `agent.mcp_servers`, as validated at boot. */
export type McpServerConfig = AgentConfig['agent']['mcpServers'][string];

/** Values that are secrets of the service and must never reach a log, a trace or the audit: header and env values. */
export function mcpServerSecrets(servers: AgentConfig['agent']['mcpServers']): string[] {
  return Object.values(servers).flatMap((server) => [...Object.values(server.headers), ...Object.values(server.env)]);
}
