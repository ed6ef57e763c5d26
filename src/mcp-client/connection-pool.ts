import { StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { DEFAULT_INHERITED_ENV_VARS, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ToolCaller } from '../agent/core/tool-source.js';
import { cutText } from '../common/cut-text.js';
import { shownEscaped } from '../common/shown-text.js';
import { withLimits, type SandboxLimits } from '../workspace/command-runner.js';
import { bubblewrapArgs, commandEnvironment, probeBubblewrap, sandboxShell } from '../workspace/sandbox.js';
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

/** What HTTP cannot carry as itself: controls (dropped or refused by clients and servers alike). */
const UNSENDABLE = /[\0-\x1f\x7f]/;
/** Inside a group: what would split it (`,`), what encodes (`%`), and spaces (trimmed around list items). */
const GROUP_RESERVED = /[%,\s]/g;

/**
 * A header value as its UTF-8 bytes, one character per byte (fetch sends each as that byte): what an SSO
 * proxy sends for `山田 太郎`. Fetch refuses characters above U+00FF, and would send U+0080-U+00FF as Latin-1.
 */
const asUtf8Bytes = (value: string) => (/[^\x00-\x7f]/.test(value) ? Buffer.from(value, 'utf8').toString('latin1') : value);

export type RenderedHeaders = { headers: Record<string, string> } | { problem: string };

/**
 * The caller's identity in header templates: `{user}`, `{email}`, and `{groups}` as a comma-separated
 * list with `%`, `,` and whitespace in each group percent-encoded (split on `,`, percent-decode each);
 * a value beyond ASCII goes as its UTF-8 bytes.
 * A value HTTP cannot carry exactly (a control character, whitespace at an edge, which HTTP trims) is
 * a problem, never sent altered: an altered identity is another caller's.
 */
export function renderHeaders(headers: Record<string, string>, caller: ToolCaller | null): RenderedHeaders {
  const groups = (caller?.groups ?? []).map((group) => group.replace(GROUP_RESERVED, (c) => encodeURIComponent(c)));
  const values: Record<string, [name: string, value: string]> = {
    '{user}': ['user', caller?.user ?? ''],
    '{email}': ['email', caller?.email ?? ''],
    '{groups}': ['groups', groups.join(',')],
  };
  const rendered: Record<string, string> = {};
  for (const [header, template] of Object.entries(headers)) {
    for (const part of template.match(/\{user\}|\{email\}|\{groups\}/g) ?? []) {
      const [name, value] = values[part];
      const why = UNSENDABLE.test(value) ? 'it holds a control character' : value !== value.trim() ? 'it starts or ends with whitespace' : null;
      if (why) return { problem: `the caller's ${name} cannot be sent exactly in the header ${header}: ${why} (${shownEscaped(cutText(value, 256))})` };
    }
    rendered[header] = asUtf8Bytes(template.replace(/\{user\}|\{email\}|\{groups\}/g, (part) => values[part][1]));
  }
  return { headers: rendered };
}

const templated = (headers: Record<string, string>) => Object.values(headers).some((value) => /\{(user|email|groups)\}/.test(value));

const shellQuote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * A `sandbox: true` server's command under the same bubblewrap sandbox as the agent's commands: no
 * network, read-only system, `workspace` (the session's) writable, a private /tmp, the environment
 * only of commands plus its `env`, its `cwd` (where its code is) bound read-only, and the commands'
 * resource limits (processes, memory, file size: `limits`, from `workspace.*`).
 */
export function sandboxedCommand(config: McpServerConfig, workspace: string, limits: SandboxLimits): { command: string; args: string[] } {
  const env = { ...commandEnvironment(workspace), ...config.env };
  const line = withLimits(`exec ${[config.command!, ...config.args].map(shellQuote).join(' ')}`, limits);
  return {
    command: 'bwrap',
    args: [
      ...bubblewrapArgs(workspace, limits.maxMemoryBytes, config.cwd ? [config.cwd] : []),
      ...Object.entries(env).flatMap(([key, value]) => ['--setenv', key, value]),
      ...sandboxShell(line),
    ],
  };
}

/**
 * The connections of one server: one shared connection, or, when its headers name the caller, one
 * per caller (so each request carries that caller's identity and nobody else's).
 */
export class ConnectionPool {
  readonly shared: ServerConnection | null;
  private readonly byCaller = new Map<string, ServerConnection>();
  /** `sandbox: true`: one process per session, stopped when its Task ends. */
  private readonly bySession = new Map<string, ServerConnection>();
  /** Why a sandboxed server cannot start here (bubblewrap does not run), or null. */
  private readonly sandboxProblem: { kind: 'cannot_start'; reason: string } | null = null;

  constructor(
    readonly name: string,
    private readonly config: McpServerConfig,
    /** The commands' limits (`workspace.*`), which a sandboxed server runs under too. */
    private readonly limits: SandboxLimits,
    /** The current trace context (`traceparent`, `tracestate`) for each call: the server's spans join the Task's trace (issue 39). */
    private readonly traceContext: () => Record<string, string> = () => ({}),
  ) {
    if (config.sandbox) {
      // The shared connection of a sandboxed server runs in an empty folder of its own: it lists the tools.
      const scratch = mkdtempSync(join(tmpdir(), 'oam-mcp-'));
      const probe = probeBubblewrap(scratch);
      this.sandboxProblem = probe.ok ? null : { kind: 'cannot_start', reason: `sandbox: true needs bubblewrap, and ${probe.detail}` };
      this.shared = this.create(null, true, scratch);
      return;
    }
    this.shared = config.url !== undefined && templated(config.headers) ? null : this.create(null, true);
  }

  /** The connection of a session's own sandboxed process (started on first use); others: as forCaller. */
  forSession(caller: ToolCaller, sessionId: string, workspace: string): ServerConnection {
    if (!this.config.sandbox) return this.forCaller(caller);
    let connection = this.bySession.get(sessionId);
    if (!connection) {
      connection = this.create(null, false, workspace);
      this.bySession.set(sessionId, connection);
    }
    return connection;
  }

  /** The Task of a session ended: its sandboxed process goes. */
  async release(sessionId: string): Promise<void> {
    const connection = this.bySession.get(sessionId);
    this.bySession.delete(sessionId);
    await connection?.stop();
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
    return [...(this.shared ? [this.shared] : []), ...this.byCaller.values(), ...this.bySession.values()];
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((connection) => connection.stop()));
  }

  private create(caller: ToolCaller | null, restart: boolean, sandboxRoot?: string): ServerConnection {
    const { config } = this;
    const rendered = renderHeaders(config.headers, caller);
    const unsendable = 'problem' in rendered ? { kind: 'identity_unsendable' as const, reason: rendered.problem } : null;
    const stdio = sandboxRoot !== undefined ? sandboxedCommand(config, sandboxRoot, this.limits) : { command: config.command!, args: config.args };
    return new ServerConnection({
      name: this.name,
      sampling: config.sampling,
      timeoutMs: config.timeoutMs,
      // A per-caller or per-session connection is reopened on its next use instead.
      restart,
      unavailable: this.sandboxProblem ?? unsendable,
      traceContext: this.traceContext,
      ...(sandboxRoot !== undefined ? { roots: [{ uri: pathToFileURL(sandboxRoot).href, name: 'session workspace' }] } : {}),
      transport: (): Transport =>
        config.url !== undefined
          ? // Only the configured headers go out: never the caller's own credentials (MCP forbids token passthrough).
            new StreamableHTTPClientTransport(new URL(config.url), {
              requestInit: { headers: 'headers' in rendered ? rendered.headers : {} },
              fetch: tracedFetch(this.traceContext),
            })
          : new StdioClientTransport({ ...stdio, env: serverEnvironment(sandboxRoot !== undefined ? {} : config.env), cwd: config.cwd || undefined, stderr: 'pipe' }),
      stderr: (transport) => (transport instanceof StdioClientTransport ? (transport.stderr as NodeJS.ReadableStream | null) : null),
    });
  }
}

/** fetch with the current trace context as W3C headers too (Streamable HTTP servers read it there as well as in `_meta`). */
function tracedFetch(traceContext: () => Record<string, string>) {
  return (url: string | URL, init?: RequestInit): Promise<Response> => {
    const trace = Object.entries(traceContext());
    if (trace.length === 0) return fetch(url, init);
    const headers = new Headers(init?.headers);
    for (const [name, value] of trace) headers.set(name, value);
    return fetch(url, { ...init, headers });
  };
}
