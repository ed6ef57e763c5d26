import type { AgentConfig } from '../config/agent-config.js';

/** One entry of `agent.mcp_servers`, as validated at boot. */
export type McpServerConfig = AgentConfig['agent']['mcpServers'][string];
