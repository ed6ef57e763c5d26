import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { PassThrough } from 'node:stream';
import { ServerConnection } from '../../src/mcp-client/server-connection.js';

/** What another MCP server writes reaches our log only as text a terminal shows, never acts on. */

afterEach(() => void jest.restoreAllMocks());

describe("a server's own text in the log", () => {
  it('escapes the control characters of its stderr lines (ESC erasing the screen, CR rewriting the line)', async () => {
    const logged: string[] = [];
    jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => void logged.push(String(message)));
    const stderr = new PassThrough();
    const server = new McpServer({ name: 'noisy', version: '1.0.0' });
    const connection = new ServerConnection({
      name: 'noisy',
      sampling: false,
      restart: false,
      timeoutMs: 5000,
      transport: () => {
        const [client, side] = InMemoryTransport.createLinkedPair();
        void server.connect(side);
        return client;
      },
      stderr: () => stderr,
    });
    await connection.connect();
    try {
      const written = new Promise((resolve) => stderr.once('data', () => setImmediate(resolve)));
      stderr.write('\x1b[2Jall fine\r[audit] admin signed in\u202e\n');
      await written;
      expect(logged).toContain('\\x1b[2Jall fine\\r[audit] admin signed in\\u202e');
    } finally {
      await connection.stop();
      await server.close();
    }
  });
});
