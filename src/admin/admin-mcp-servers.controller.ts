import { Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { McpToolSources } from '../mcp-client/mcp-tool-sources.js';
import { AdminAction } from './admin-auth.guard.js';
import { McpServerListDto } from './admin-responses.dto.js';
import { AdminRoutes } from './admin-routes.decorator.js';

/** The MCP servers the agent uses as tools (`agent.mcp_servers`): connected or why not, their tools, the last error. */
@AdminRoutes('admin/mcp-servers', 'mcp-servers')
export class AdminMcpServersController {
  constructor(private readonly sources: McpToolSources) {}

  @Get()
  @AdminAction('admin.mcp_servers_read')
  @ApiOperation({ summary: 'The configured MCP servers: state, last error, tools (headers and env never shown)' })
  @ApiOkResponse({ type: McpServerListDto })
  list(): McpServerListDto {
    return {
      servers: this.sources.status().map((server) => ({
        name: server.name,
        transport: server.transport,
        state: server.state,
        required: server.required,
        last_error: server.lastError,
        connected_at: server.connectedAt,
        protocol: server.protocol,
        tools: server.tools,
        allow_groups: server.allowGroups,
      })),
    };
  }
}
