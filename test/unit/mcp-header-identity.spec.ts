import { describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolCallContext, ToolCaller } from '../../src/agent/core/tool-source.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { ConnectionPool, renderHeaders } from '../../src/mcp-client/connection-pool.js';
import type { McpCallAudit, McpCallRecord } from '../../src/mcp-client/mcp-call-audit.js';
import { McpServerSource } from '../../src/mcp-client/mcp-server-source.js';
import { ManualClock } from '../support/manual-clock.js';

/**
 * The caller's identity in an HTTP MCP server's header templates: sent exactly or not at all. Two
 * callers must never reach the server as one (a dropped control character, a comma inside a group).
 */

const caller = (user: string, groups: string[] = []): ToolCaller => ({ user, email: null, groups });
const TEMPLATES = { 'X-On-Behalf-Of': '{user}', 'X-Groups': '{groups}', Authorization: 'Bearer static' };

describe('header templates', () => {
  it('fills the caller in as it is, and the static headers unchanged', () => {
    expect(renderHeaders(TEMPLATES, caller('alice', ['dev', 'ops']))).toEqual({
      headers: { 'X-On-Behalf-Of': 'alice', 'X-Groups': 'dev,ops', Authorization: 'Bearer static' },
    });
  });

  it.each([
    ['a C0 control inside', 'ali\u0001ce'],
    ['CR LF and a tab', 'tab\tuser\r\nX-Evil: 1'],
    ['DEL', 'bob\u007f'],
    ['a leading space (HTTP drops it)', ' alice'],
    ['a trailing tab', 'alice\t'],
  ])('refuses a user with %s instead of sending someone else', (_, user) => {
    const rendered = renderHeaders(TEMPLATES, caller(user));
    expect(rendered).toEqual({ problem: expect.stringMatching(/^the caller's user cannot be sent exactly in the header X-On-Behalf-Of: /) });
  });

  it('encodes each group so that a list splits back into the same groups', () => {
    const rendered = renderHeaders({ 'X-Groups': '{groups}' }, caller('alice', ['dev,admins', '100%', 'Domain Users']));
    expect(rendered).toEqual({ headers: { 'X-Groups': 'dev%2Cadmins,100%25,Domain%20Users' } });
    const { headers } = rendered as { headers: Record<string, string> };
    expect(headers['X-Groups'].split(',').map(decodeURIComponent)).toEqual(['dev,admins', '100%', 'Domain Users']);
  });

  it('refuses a group with a control character', () => {
    expect(renderHeaders({ 'X-Groups': '{groups}' }, caller('alice', ['dev\u0000']))).toEqual({
      problem: expect.stringMatching(/^the caller's groups cannot be sent exactly in the header X-Groups: /),
    });
  });
});

describe('a caller whose identity cannot be sent', () => {
  it('gets the server as unavailable, with a tool error that is audited, and never another identity', async () => {
    const config = validateConfig({ agent: { mcp_servers: { remote: { url: 'http://127.0.0.1:9/mcp', headers: TEMPLATES } } } }).agent.mcpServers.remote;
    const pool = new ConnectionPool('remote', config, validateConfig({}).workspace);
    const records: McpCallRecord[] = [];
    const audit = { boundedArguments: (args: unknown) => args, record: async (record: McpCallRecord) => void records.push(record) };
    const source = new McpServerSource('remote', config, pool, audit as unknown as McpCallAudit, { toolOutputChars: 4000 });
    const mallory = caller('ali\u0001ce');
    try {
      expect(await source.tools(mallory)).toEqual([]);
      expect(source.notices(mallory)).toEqual(['The MCP server "remote" is unavailable: your identity cannot be sent to it exactly. Its tools are not offered in this task.']);
      expect(pool.forCaller(mallory).lastError).toBe("the caller's user cannot be sent exactly in the header X-On-Behalf-Of: it holds a control character (ali\\x01ce)");
      const context = {
        taskId: 't1',
        subtask: '',
        signal: new AbortController().signal,
        workspace: { sessionId: 's1', paths: { root: '/tmp' } },
        caller: mallory,
        events: { emit: async () => undefined },
        clock: new ManualClock(),
      };
      const result = await source.execute({ function: { name: 'remote__whoami', arguments: {} } }, context as unknown as ToolCallContext);
      expect(result).toEqual({
        output: 'Error: the MCP server "remote" is unavailable (your identity cannot be sent to it exactly). Go on without it.',
        isError: true,
        step: expect.objectContaining({ kind: 'mcp_tool', outcome: 'error' }),
      });
      expect(records).toEqual([expect.objectContaining({ server: 'remote', tool: 'remote__whoami', outcome: 'error', error: expect.stringContaining('cannot be sent exactly') })]);
    } finally {
      await pool.stop();
    }
  });
});

describe('a caller whose name is not Latin-1', () => {
  it('reaches the server as the UTF-8 bytes of the name, as an SSO proxy sends it', async () => {
    const seen: string[] = [];
    const server = createServer((request, response) => {
      seen.push(Buffer.from(String(request.headers['x-on-behalf-of']), 'latin1').toString('utf8'));
      response.writeHead(503).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const config = validateConfig({ agent: { mcp_servers: { remote: { url: `http://127.0.0.1:${port}/mcp`, headers: TEMPLATES, timeout_ms: 2000 } } } }).agent.mcpServers.remote;
    const pool = new ConnectionPool('remote', config, validateConfig({}).workspace);
    try {
      const connection = pool.forCaller(caller('山田 太郎', ['開発']));
      await connection.connect();
      expect(seen).toEqual(['山田 太郎']);
      expect(connection.downKind).toBe('cannot_connect');
    } finally {
      await pool.stop();
      server.close();
    }
  });
});
