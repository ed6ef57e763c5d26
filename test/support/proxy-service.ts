import type { Client } from '@modelcontextprotocol/client';
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
