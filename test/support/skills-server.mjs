// A stdio MCP server that serves the skills under the folder given as its argument through the SDK's own
// skills extension (SEP-2640: skills/list, skills/get, skill:// resources), and one tool: what a team's
// "skills server" is. Used by skills.e2e-spec.ts as a real SDK server.
import { McpServer } from '@modelcontextprotocol/server';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

const skills = await loadSkills(process.argv[2]);
const server = new McpServer({ name: 'skills-server', version: '1.0.0' });
server.registerTool('ping', { description: 'Answers pong.' }, () => ({ content: [{ type: 'text', text: 'pong' }] }));
skills.attach(server);
await server.connect(new StdioServerTransport());
