import type { Client } from '@modelcontextprotocol/client';
import { E2eStack, useStackInstance, type StackOptions } from './e2e-stack.js';
import { as, PROXY_AUTH } from './proxy-identity.js';

/**
 * An E2eStack behind the proxy (auth.mode proxy_headers over the options' sections) with the MCP clients of
 * alice@example.com and bob@example.com, connected at start and closed at stop.
 */
export class ProxiedStack extends E2eStack {
  alice!: Client;
  bob!: Client;

  constructor(options: StackOptions = {}) {
    const { config = {} } = options;
    super({ ...options, config: async (ollamaUrl, origin, dir) => ({ auth: PROXY_AUTH, ...(typeof config === 'function' ? await config(ollamaUrl, origin, dir) : config) }) });
  }

  async start(): Promise<this> {
    await super.start();
    this.alice = await this.mcpClient(as('alice@example.com'));
    this.bob = await this.mcpClient(as('bob@example.com'));
    return this;
  }
}

/** useStack for a ProxiedStack: one for the enclosing describe block. */
export const useProxiedStack = (options: StackOptions = {}) => useStackInstance(new ProxiedStack(options));
