/**
 * Baseline (a), the protocol floor: the MCP SDK v2 stateless handler on bare node:http (no Nest, no
 * Express, no database) serving one in-memory tool with the same name, schema and answer shape as
 * our agent_status. Also serves POST /sink, which only reads the body.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { AGENT_STATUS_INPUT_SCHEMA } from '../src/tools/tool-schemas.js';

const schema = fromJsonSchema<{ task_id: string }>(AGENT_STATUS_INPUT_SCHEMA);
const answer = (taskId: string) => `task_id: ${taskId}\nstatus: completed\nmessage: in-memory answer`;

// The body limit is raised as ours is (for 20 MiB of images), so that a large request can be compared too.
const maxRequestBodySize = 64 * 1024 * 1024;
const handler = createMcpHandler(
  () => {
    const server = new McpServer({ name: 'floor', version: '1.0.0' });
    server.registerTool('agent_status', { inputSchema: schema }, async ({ task_id }) => ({ content: [{ type: 'text', text: answer(task_id) }] }));
    return server;
  },
  { maxRequestBodySize },
);
const node = toNodeHandler(handler, { maxRequestBodySize });
const port = Number(process.argv[2]);
// POST /sink reads a body and answers at once: the transfer alone, the baseline for the large-image figure.
const sink = (req: IncomingMessage, res: ServerResponse) => req.resume().once('end', () => res.end('{}'));
createServer((req, res) => void (req.url === '/sink' ? sink(req, res) : node(req, res))).listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
