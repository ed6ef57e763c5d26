import type { Client } from '@modelcontextprotocol/client';
import { E2eStack, useStackInstance, type StackOptions } from './e2e-stack.js';
import { modernClient } from './mcp-clients.js';
import { as, PROXY_AUTH } from './proxy-identity.js';
import { ServiceProcess, writeConfig } from './service-process.js';

/** The service behind the SSO proxy, with the MCP clients of its two users. */
export interface ProxiedService {
  config: Awaited<ReturnType<typeof writeConfig>>;
  service: ServiceProcess;
  /** The service's URL without `/mcp`, for the admin and other REST routes. */
  base: string;
  alice: Client;
  bob: Client;
}

/**
 * Starts the built service behind the proxy (auth.mode proxy_headers, `overrides` for the other
 * sections) and connects alice@example.com and bob@example.com, for suites about several users.
 */
export async function startBehindProxy(ollamaUrl: string, overrides: Record<string, unknown> = {}, dir?: string): Promise<ProxiedService> {
  const config = await writeConfig(ollamaUrl, { auth: PROXY_AUTH, ...overrides }, dir);
  const service = await new ServiceProcess(config.file).start();
  const alice = await modernClient(service.url, as('alice@example.com'));
  const bob = await modernClient(service.url, as('bob@example.com'));
  return { config, service, base: service.url.replace(/\/mcp$/, ''), alice, bob };
}

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
