import { StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { DEFAULT_INHERITED_ENV_VARS, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { ToolCaller } from '../agent/core/tool-source.js';
import type { McpServerConfig } from './mcp-server-config.js';
import { ServerConnection } from './server-connection.js';

/** What a stdio server finds on PATH unless its `env` sets PATH: the system's, not the service's. */
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';
/** Per-caller connections (header templates) kept at once; the least recently used is closed first. */
const MAX_CALLER_CONNECTIONS = 16;

/**
 * The environment of a stdio server: exactly its `env`, plus PATH. The SDK would add HOME, USER, SHELL,
 * TERM and LOGNAME of the service; each is set undefined, which Node's spawn leaves out.
 */
export function serverEnvironment(env: Record<string, string>): Record<string, string> {
  const unset = Object.fromEntries(DEFAULT_INHERITED_ENV_VARS.map((key) => [key, undefined])) as unknown as Record<string, string>;
  return { ...unset, PATH: DEFAULT_PATH, ...env };
}

/** The caller's identity in a header template: `{user}`, `{email}`, `{groups}` (comma-separated), control characters dropped. */
export function renderHeaders(headers: Record<string, string>, caller: ToolCaller | null): Record<string, string> {
  const value = (text: string) => text.replace(/[\0-\x1f\x7f]/g, '');
  const values: Record<string, string> = { '{user}': value(caller?.user ?? ''), '{email}': value(caller?.email ?? ''), '{groups}': value((caller?.groups ?? []).join(',')) };
  return Object.fromEntries(Object.entries(headers).map(([name, template]) => [name, template.replace(/\{user\}|\{email\}|\{groups\}/g, (part) => values[part])]));
}

const templated = (headers: Record<string, string>) => Object.values(headers).some((value) => /\{(user|email|groups)\}/.test(value));

/**
 * The connections of one server: one shared connection, or, when its headers name the caller, one
 * per caller (so each request carries that caller's identity and nobody else's).
 */
export class ConnectionPool {
  readonly shared: ServerConnection | null;
  private readonly byCaller = new Map<string, ServerConnection>();

  constructor(
    readonly name: string,
    private readonly config: McpServerConfig,
  ) {
    this.shared = config.url !== undefined && templated(config.headers) ? null : this.create(null, true);
  }

  /** The connection a caller's listing and calls go through. */
  forCaller(caller: ToolCaller): ServerConnection {
    if (this.shared) return this.shared;
    const key = JSON.stringify([caller.user, caller.email, caller.groups]);
    let connection = this.byCaller.get(key);
    if (connection) {
      this.byCaller.delete(key);
    } else {
      connection = this.create(caller, false);
      if (this.byCaller.size >= MAX_CALLER_CONNECTIONS) {
        const [oldestKey, oldest] = this.byCaller.entries().next().value!;
        this.byCaller.delete(oldestKey);
        void oldest.stop();
      }
    }
    this.byCaller.set(key, connection);
    return connection;
  }

  all(): ServerConnection[] {
    return this.shared ? [this.shared] : [...this.byCaller.values()];
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((connection) => connection.stop()));
  }

  private create(caller: ToolCaller | null, restart: boolean): ServerConnection {
    const { config } = this;
    return new ServerConnection({
      name: this.name,
      sampling: config.sampling,
      // A per-caller connection is reopened on its next use instead.
      restart,
      transport: (): Transport =>
        config.url !== undefined
          ? // Only the configured headers go out: never the caller's own credentials (MCP forbids token passthrough).
            new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: renderHeaders(config.headers, caller) } })
          : new StdioClientTransport({ command: config.command!, args: config.args, env: serverEnvironment(config.env), cwd: config.cwd || undefined, stderr: 'pipe' }),
      stderr: (transport) => (transport instanceof StdioClientTransport ? (transport.stderr as NodeJS.ReadableStream | null) : null),
    });
  }
}
