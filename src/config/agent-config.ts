import type { z } from 'zod';
import { configSchema, type ConfigDocument } from './config.schema.js';

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
type Camelized<T> = T extends readonly unknown[]
  ? { [K in keyof T]: Camelized<T[K]> }
  : T extends object
    ? { [K in keyof T as K extends string ? Camel<K> : K]: Camelized<T[K]> }
    : T;

/**
 * The one typed configuration of the service, inferred from `configSchema` with its keys in camelCase.
 * It is read from `agent.yaml` (or the file named by AGENT_CONFIG), overlaid with AGENT__SECTION__KEY
 * environment overrides, and validated at boot: every unknown key and every bad value is reported by its
 * dotted name, and the process refuses to start.
 */
export type AgentConfig = Camelized<ConfigDocument>;

/**
 * One thing wrong with the configuration. `path` is the key as written in YAML (`['server', 'port']`);
 * `subject` names what is wrong when it is not a key (a file, an environment variable).
 */
export interface ConfigIssue {
  path: string[];
  message: string;
  subject?: string;
}

const nameOf = (issue: ConfigIssue) => issue.subject ?? (issue.path.length > 0 ? issue.path.join('.') : '(root)');

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(readonly issues: ConfigIssue[]) {
    const problems = issues.map((issue) => `${nameOf(issue)}: ${issue.message}`);
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const startsWith = (path: string[], prefix: string[]) => prefix.every((part, index) => path[index] === part);

/**
 * zod's issues as ConfigIssues, one per unknown key. zod reports a mapping's unknown keys after its
 * values; they move before them, so each section reads "unknown keys, then bad values in schema order".
 */
function issuesOf(error: z.ZodError): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    if (issue.code !== 'unrecognized_keys') {
      issues.push({ path, message: issue.message });
      continue;
    }
    const first = issues.findIndex((earlier) => startsWith(earlier.path, path));
    const unknown = issue.keys.map((key) => ({ path: [...path, key], message: 'unknown key' }));
    issues.splice(first === -1 ? issues.length : first, 0, ...unknown);
  }
  return issues;
}

const snakeToCamel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** What camelize reads of a zod schema's definition (zod 4's `_zod.def`): its kind and the schemas inside it. */
interface SchemaDef {
  type: string;
  innerType?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  valueType?: z.ZodType;
  element?: z.ZodType;
}
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

/**
 * The validated document with the keys the schema names camel-cased, found by walking the schema beside the value:
 * an object's keys are config keys, a record's keys are data (header names, environment variables, MCP server
 * names, tiers) and stay as written, so a new map needs no list to keep its keys.
 */
export function camelize(schema: z.ZodType, value: unknown): unknown {
  const def = defOf(schema);
  switch (def.type) {
    case 'default':
    case 'prefault':
    case 'optional':
    case 'nullable':
    case 'readonly':
      return camelize(def.innerType!, value);
    case 'pipe': // z.preprocess and .transform: the value is what the pipe's output schema made
      return camelize(def.out!, value);
    case 'object':
      if (!isPlainObject(value)) return value;
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [snakeToCamel(key), def.shape![key] ? camelize(def.shape![key], item) : item]));
    case 'record':
      if (!isPlainObject(value)) return value;
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, camelize(def.valueType!, item)]));
    case 'array':
      return Array.isArray(value) ? value.map((item) => camelize(def.element!, item)) : value;
    default:
      return value;
  }
}

/** Freezes a configuration and everything in it: after the loader has resolved its paths, nothing changes it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** Values of `agent.mcp_servers` that are secrets and must never reach a log, a trace or the audit: header and env values. */
export function mcpServerSecrets(servers: AgentConfig['agent']['mcpServers']): string[] {
  return Object.values(servers).flatMap((server) => [...Object.values(server.headers), ...Object.values(server.env)]);
}

/** Validates a parsed YAML document; throws ConfigError naming every bad key. */
export function validateConfig(raw: unknown): AgentConfig {
  const result = configSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(issuesOf(result.error));
  return camelize(configSchema, result.data) as AgentConfig;
}
