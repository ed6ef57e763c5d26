/**
 * `node dist/eval-tools.js <server>`: one of the eval's own MCP servers (eval/eval-tools.ts) over stdio, which
 * `npm run eval` configures on the service it starts (agent.mcp_servers). The official SDK's server, as a team's
 * own MCP server would be written.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { SERVER_INFO } from './common/server-info.js';
import { EVAL_SERVERS } from './eval/eval-tools.js';

const name = process.argv[2] ?? '';
const spec = EVAL_SERVERS[name];
if (!spec) {
  process.stderr.write(`usage: eval-tools.js ${Object.keys(EVAL_SERVERS).join(' | ')}\n`);
  process.exit(2);
}
const server = new McpServer({ name, version: SERVER_INFO.version });
for (const tool of spec.tools) {
  server.registerTool(tool.name, { description: tool.description, inputSchema: tool.input, annotations: { readOnlyHint: tool.readOnly } }, (args) => ({
    content: [{ type: 'text', text: tool.run(args as Record<string, string>) }],
  }));
}
void server.connect(new StdioServerTransport());
