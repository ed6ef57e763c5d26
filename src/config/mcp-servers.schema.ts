import { z } from 'zod';

/**
 * `agent.mcp_servers`: other MCP servers whose tools the agent may call, by name. A server is either
 * stdio (`command`, started by the service) or Streamable HTTP (`url`); everything else is per server.
 * Kept apart from config.schema.ts (which includes it) because it is one feature's whole surface.
 */

/** Server names become tool-name prefixes (`<server>__<tool>`): short, lower case, no `_` (the separator). */
const SERVER_NAME = /^[a-z0-9][a-z0-9-]{0,23}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** The caller's identity, the only values a header template may name. */
export const HEADER_PLACEHOLDERS = ['{user}', '{email}', '{groups}'] as const;

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
const list = z.custom<string[]>(isStringList, { error: 'expected a list of strings' }).default(() => []);
const whole = (min: number, max: number, fallback: number) =>
  z
    .number({ error: 'expected an integer' })
    .refine((value) => Number.isInteger(value) && value >= min && value <= max, { error: (issue) => `must be an integer between ${min} and ${max} (got ${String(issue.input)})` })
    .default(fallback);
const stringMap = (name: RegExp, what: string) =>
  z
    .record(z.string(), z.string({ error: 'expected a string value' }), { error: 'expected a mapping' })
    .refine((map) => Object.entries(map).every(([key, value]) => name.test(key) && !/[\r\n\0]/.test(value)), { error: `${what} names must match ${name.source} and values be single lines` })
    .default(() => ({}));

const server = z
  .strictObject(
    {
      command: z.string({ error: 'expected a string' }).optional(),
      args: list,
      env: stringMap(ENV_NAME, 'environment variable'),
      cwd: z.string({ error: 'expected a string' }).default(''),
      sandbox: z.boolean({ error: 'expected true or false' }).default(false),
      url: z.string({ error: 'expected a string' }).optional(),
      headers: stringMap(HEADER_NAME, 'header'),
      tools: z
        .strictObject({ allow: list, deny: list }, { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown key' : 'expected a mapping with allow and deny') })
        .prefault({}),
      allow_groups: list,
      timeout_ms: whole(100, 3_600_000, 60_000),
      /** 0: the same bound as agent.tool_output_chars. */
      max_output_chars: whole(0, 1_000_000, 0),
      approval: z.enum(['auto', 'always', 'never'], { error: 'must be one of auto, always, never' }).default('auto'),
      sampling: z.boolean({ error: 'expected true or false' }).default(false),
      /** A required server that is down makes /readyz not ready; an optional one only tells the agent. */
      required: z.boolean({ error: 'expected true or false' }).default(false),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown key' : 'expected a mapping') },
  )
  .superRefine((value, context) => {
    const problem = (path: string, message: string) => context.addIssue({ code: 'custom', path: [path], message });
    const stdio = value.command !== undefined;
    const http = value.url !== undefined;
    if (stdio === http) problem(stdio ? 'url' : 'command', stdio ? 'give command (stdio) or url (Streamable HTTP), not both' : 'required: command (a stdio server) or url (a Streamable HTTP server)');
    if (stdio && value.command!.trim() === '') problem('command', 'must not be empty');
    if (http) {
      const url = value.url!;
      if (!URL.canParse(url) || !['http:', 'https:'].includes(new URL(url).protocol)) problem('url', 'must be an http:// or https:// URL');
      else if (new URL(url).username !== '' || new URL(url).password !== '') problem('url', 'must not hold credentials (user:password@): send them in headers');
      const stdioOnly = { args: value.args.length > 0, env: Object.keys(value.env).length > 0, cwd: value.cwd !== '', sandbox: value.sandbox };
      for (const [key, given] of Object.entries(stdioOnly)) if (given) problem(key, 'only for a stdio server (command)');
    }
    if (stdio && Object.keys(value.headers).length > 0) problem('headers', 'only for a Streamable HTTP server (url)');
    for (const [name, template] of Object.entries(value.headers)) {
      const unknown = template.match(/\{[^}]*\}/g)?.filter((part) => !(HEADER_PLACEHOLDERS as readonly string[]).includes(part)) ?? [];
      if (unknown.length > 0) context.addIssue({ code: 'custom', path: ['headers', name], message: `unknown placeholder ${unknown[0]} (the placeholders are ${HEADER_PLACEHOLDERS.join(', ')})` });
    }
  });

export const mcpServers = z
  .record(z.string(), server, { error: 'expected a mapping of server names to servers' })
  .superRefine((servers, context) => {
    for (const name of Object.keys(servers)) {
      if (!SERVER_NAME.test(name)) context.addIssue({ code: 'custom', path: [name], message: `server names must match ${SERVER_NAME.source} (they prefix tool names as <server>__<tool>)` });
    }
  })
  .default(() => ({}));
