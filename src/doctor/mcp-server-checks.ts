import type { AgentConfig } from '../config/agent-config.js';
import { ConnectionPool } from '../mcp-client/connection-pool.js';
import type { CheckLine } from '../ollama/ollama-diagnosis.js';

/** How long the doctor gives each server (in parallel) to connect and list its tools. */
const CONNECT_MS = 15_000;

/**
 * One line per `agent.mcp_servers` entry: connected (protocol, tools) or why not. A required server that
 * is down fails the doctor; an optional one warns (the service runs without it). A server whose headers
 * name the caller is tried with an empty identity, as no caller is known here.
 */
export async function checkMcpServers(servers: AgentConfig['agent']['mcpServers'], limits: AgentConfig['workspace']): Promise<CheckLine[]> {
  return Promise.all(
    Object.entries(servers).map(async ([name, server]): Promise<CheckLine> => {
      const pool = new ConnectionPool(name, server, limits);
      const connection = pool.shared ?? pool.forCaller({ user: '', email: null, groups: [] });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([connection.connect(), new Promise((resolve) => (timer = setTimeout(resolve, CONNECT_MS)))]);
      clearTimeout(timer);
      const line = { name: `mcp server ${name}` };
      const connected = connection.state === 'connected';
      const result: CheckLine = connected
        ? {
            ...line,
            level: 'ok',
            message: `connected (${connection.protocol ?? 'unknown protocol'}), ${connection.tools.length} tools: ${connection.tools.map((tool) => tool.name).join(', ')}`,
          }
        : {
            ...line,
            level: server.required ? 'fail' : 'warn',
            message: `${connection.lastError ?? `no answer within ${CONNECT_MS} ms`}${server.required ? '' : ' (optional: the agent runs without it)'}`,
          };
      await pool.stop();
      return result;
    }),
  );
}
