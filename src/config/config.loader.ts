import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { INSTALLATION } from '../common/installation.js';
import { runsFromClone, userConfigFile, userDataFolder } from './user-folders.js';
import { type AgentConfig, ConfigError, deepFreeze, isPlainObject, validateConfig, type ConfigIssue } from './agent-config.js';
import { configSchema } from './config.schema.js';
import { closestKey } from './key-suggestion.js';

/** Keys that name a place on disk; relative values resolve as described on loadConfig. */
const PATH_KEYS = [
  ['database', 'path'],
  ['workspace', 'root'],
  ['workspace', 'template'],
] as const;

/** Which file configures the service, why that one, and the folder its relative paths (and the defaults') resolve against. */
export interface ConfigSource {
  file: string;
  reason: string;
  found: boolean;
  base: string;
}

/**
 * Which file configures the service, and why that one: `AGENT_CONFIG`, else `agent.yaml` in the working
 * directory, else the one in the user's config folder (`$XDG_CONFIG_HOME/ollama-agent-mcp/`), else, in a clone,
 * the committed one next to the installation (a client that starts the service from its own folder, or from `/`,
 * still finds it). Relative paths resolve against the file's folder. With no file, against the working directory
 * in a clone and against the user's data folder in an installed package (whose own folder is npm's to replace).
 */
export function locateConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), installation = INSTALLATION): ConfigSource {
  const at = (file: string, reason: string, found = true) => ({ file, reason, found, base: dirname(file) });
  const named = env.AGENT_CONFIG && resolve(cwd, env.AGENT_CONFIG);
  if (named) return at(named, 'named by AGENT_CONFIG', existsSync(named));
  const here = resolve(cwd, 'agent.yaml');
  if (existsSync(here)) return at(here, 'agent.yaml in the working directory');
  const user = userConfigFile(env);
  if (existsSync(user)) return at(user, `no agent.yaml in the working directory (${cwd}); the one in the user's config folder`);
  const clone = runsFromClone(installation);
  const installed = join(installation, 'agent.yaml');
  if (clone && existsSync(installed)) return at(installed, `no agent.yaml in the working directory (${cwd}) or ${user}; the one next to the installation`);
  const base = clone ? cwd : userDataFolder(env);
  return { file: here, reason: `no agent.yaml in the working directory or ${user}${clone ? ' or next to the installation' : ''}`, found: false, base };
}

/** For the start-up log: the file that was read and why, or that none was (defaults and overrides only). */
export function describeConfigSource(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const { file, reason, found, base } = locateConfig(env, cwd);
  return found ? `${file} (${reason})` : `no file (${reason}; defaults and AGENT__* overrides, paths from ${base})`;
}

/**
 * The only place that reads configuration from process.env (with locateConfig and, for `init`, user-folders.ts's
 * starterPlaces; the logger's NO_COLOR and the sandbox probe's inherited environment are not configuration):
 * AGENT_CONFIG picks the file (else locateConfig's search), and
 * AGENT__SECTION__KEY variables override single keys (e.g. AGENT__OLLAMA__MODEL=llama3.2); OpenTelemetry's
 * standard OTEL_* variables set the `telemetry` keys (below the AGENT__ ones).
 *
 * Relative paths in the file (and the defaults) resolve against the file's directory (locateConfig's `base`), so a
 * client that starts the service from `/` or from its own folder gets the same database and workspace;
 * paths from environment overrides resolve against the working directory, as a shell user expects.
 * Every problem names where the bad value came from: the file and key, or the variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), installation = INSTALLATION): AgentConfig {
  const { file, base: fileBase } = locateConfig(env, cwd, installation);
  const document = readDocument(file, env);
  const overrides = overridesFromEnv(env);
  let config: AgentConfig;
  try {
    config = validateConfig(deepMerge(document, overrides.document));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(error.issues.map((issue) => located(suggested(issue), file, document, overrides.variables)));
  }
  const base = (path: readonly string[]) => (overrides.variables.has(path.join('.')) ? cwd : fileBase);
  config.database.path = config.database.path === ':memory:' ? ':memory:' : resolve(base(PATH_KEYS[0]), config.database.path);
  config.workspace.root = resolve(base(PATH_KEYS[1]), config.workspace.root);
  if (config.workspace.template) config.workspace.template = resolve(base(PATH_KEYS[2]), config.workspace.template);
  // A stdio MCP server's working directory, like the other paths of the file, is relative to the file.
  for (const server of Object.values(config.agent.mcpServers)) if (server.cwd) server.cwd = resolve(fileBase, server.cwd);
  for (const dir of config.skills.dirs) dir.path = resolve(fileBase, dir.path);
  const missing = missingWorkspaceRoot(config.workspace.root, fileBase) ?? missingTemplate(config.workspace.template);
  if (missing) throw new ConfigError([located(missing, file, document, overrides.variables)]);
  return deepFreeze(config);
}

function readDocument(file: string, env: NodeJS.ProcessEnv): unknown {
  if (!existsSync(file)) {
    if (env.AGENT_CONFIG) throw new ConfigError([{ path: [], subject: 'AGENT_CONFIG', message: `file not found: ${file}` }]);
    return {};
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([{ path: [], subject: file, message: `cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` }]);
  }
  try {
    return parse(text) ?? {};
  } catch (error) {
    throw new ConfigError([{ path: [], subject: file, message: `not valid YAML (${(error as Error).message.split('\n')[0]})` }]);
  }
}

/** The template copied into each new session workspace must be a directory. */
function missingTemplate(template: string): ConfigIssue | null {
  if (!template || statSync(template, { throwIfNoEntry: false })?.isDirectory()) return null;
  return { path: ['workspace', 'template'], message: `${template} is not a directory` };
}

/**
 * The default workspace (beside the config file, or in the data folder) is created at start; any other root must
 * exist, since a missing one is most likely a typo that would otherwise become a new, empty workspace.
 */
function missingWorkspaceRoot(root: string, base: string): ConfigIssue | null {
  const fallback = resolve(base, configSchema.parse({}).workspace.root);
  if (root === fallback || existsSync(root)) return null;
  return { path: ['workspace', 'root'], message: `${root} does not exist (create it, or leave the key out for ${fallback})` };
}

/** `unknown key` with the closest key the schema knows at that level, when one is close. */
function suggested(issue: ConfigIssue): ConfigIssue {
  if (issue.message !== 'unknown key') return issue;
  const key = issue.path[issue.path.length - 1];
  const siblings = knownKeysAt(issue.path.slice(0, -1));
  const closest = closestKey(key, siblings);
  return closest ? { ...issue, message: `unknown key (did you mean ${[...issue.path.slice(0, -1), closest].join('.')}?)` } : issue;
}

function knownKeysAt(path: string[]): string[] {
  let node: unknown = configSchema.parse({});
  for (const part of path) node = isPlainObject(node) ? node[part] : undefined;
  return isPlainObject(node) ? Object.keys(node) : [];
}

/** Names the variable that set the bad key, else the file that did; defaults and cross-key rules name the key. */
function located(issue: ConfigIssue, file: string, document: unknown, variables: Map<string, string>): ConfigIssue {
  if (issue.subject) return issue;
  const key = issue.path.join('.');
  const variable = [...variables].find(([path]) => path === key || path.startsWith(`${key}.`))?.[1];
  if (variable) return { ...issue, subject: `${variable} (${key})` };
  if (hasPath(document, issue.path)) return { ...issue, subject: `${file}: ${key}` };
  return issue;
}

function hasPath(document: unknown, path: string[]): boolean {
  let node = document;
  for (const part of path) {
    if (!isPlainObject(node) || !(part in node)) return false;
    node = node[part];
  }
  return true;
}

/** OpenTelemetry's environment variables and the `telemetry.*` key each sets; the traces-specific one wins over the general. */
const OTEL_VARIABLES = [
  ['OTEL_EXPORTER_OTLP_ENDPOINT', 'otlp_endpoint'],
  ['OTEL_EXPORTER_OTLP_PROTOCOL', 'otlp_protocol'],
  ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'otlp_protocol'],
  ['OTEL_SERVICE_NAME', 'service_name'],
] as const;

/**
 * `AGENT__OLLAMA__MODEL=x` style overrides in the YAML shape (values parsed as YAML scalars), and for
 * each dotted key the variable that set it.
 */
function overridesFromEnv(env: NodeJS.ProcessEnv) {
  const document: Record<string, unknown> = {};
  const variables = new Map<string, string>();
  // The OpenTelemetry SDK's standard variables, mapped to their keys (an AGENT__TELEMETRY__* variable wins).
  const telemetry: Record<string, unknown> = {};
  for (const [name, key] of OTEL_VARIABLES) {
    const text = env[name];
    if (text === undefined || text === '') continue;
    telemetry[key] = text;
    variables.set(`telemetry.${key}`, name);
  }
  // OTEL_SDK_DISABLED=true turns tracing off whatever the endpoint.
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') {
    telemetry.otlp_endpoint = '';
    variables.set('telemetry.otlp_endpoint', 'OTEL_SDK_DISABLED');
  }
  if (Object.keys(telemetry).length > 0) document.telemetry = telemetry;
  for (const [name, text] of Object.entries(env)) {
    if (!name.startsWith('AGENT__') || text === undefined) continue;
    const path = name.slice('AGENT__'.length).toLowerCase().split('__');
    let node = document;
    for (const part of path.slice(0, -1)) node = node[part] = isPlainObject(node[part]) ? node[part] : {};
    node[path[path.length - 1]] = parse(text);
    variables.set(path.join('.'), name);
  }
  return { document, variables };
}

function deepMerge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}
