/**
 * Baseline (a), the protocol floor: the MCP SDK v2 stateless handler on bare node:http (no Nest, no
 * Express, no database) serving one in-memory tool with the same name, schema and answer shape as
 * our agent_status.
 */
import { createServer } from 'node:http';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { AGENT_STATUS_INPUT_SCHEMA } from '../src/tools/tool-schemas.js';
const schema = fromJsonSchema(AGENT_STATUS_INPUT_SCHEMA);
const answer = (taskId) => `task_id: ${taskId}\nstatus: completed\nmessage: in-memory answer`;
const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'floor', version: '1.0.0' });
    server.registerTool('agent_status', { inputSchema: schema }, async ({ task_id }) => ({ content: [{ type: 'text', text: answer(task_id) }] }));
    return server;
});
const node = toNodeHandler(handler);
const port = Number(process.argv[2]);
createServer((req, res) => void node(req, res)).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
