import { isIP } from 'node:net';

/**
 * The one typed configuration of the service. It is read from `agent.yaml` (or the file named by
 * AGENT_CONFIG), overlaid with AGENT__SECTION__KEY environment overrides, and validated at boot: every
 * unknown key and every bad value is reported by its dotted name, and the process refuses to start.
 */
export interface AgentConfig {
  server: { host: string; port: number; allowedOrigins: string[] };
  auth: {
    mode: 'none' | 'proxy_headers' | 'proxy_jwt';
    trustedProxies: string[];
    userHeader: string;
    emailHeader: string;
    groupsHeader: string;
    adminGroups: string[];
    adminToken: string;
    jwtHeader: string;
    jwksUrl: string;
    issuer: string;
    audience: string;
    algorithms: string[];
    userClaim: string;
    groupsClaim: string;
  };
  audit: { retentionDays: number; checkpointEvery: number };
  ollama: {
    host: string;
    model: string;
    temperature: number;
    numCtx: number;
    keepAlive: string;
    requestTimeoutMs: number;
  };
  database: { type: 'sqlite' | 'postgres'; path: string; url: string };
  queue: { pollIntervalMs: number; leaseMs: number; shutdownGraceMs: number };
  workspace: {
    root: string;
    sandbox: 'auto' | 'bubblewrap' | 'none';
    commandTimeoutMs: number;
    captureBytes: number;
    maxFileBytes: number;
    maxProcesses: number;
  };
  agent: {
    maxSubtasks: number;
    maxRoundsPerSubtask: number;
    maxRoundsPerTask: number;
    toolOutputChars: number;
  };
  mcp: {
    images: { maxCount: number; maxBytesPerImage: number; maxTotalBytes: number };
    tasks: { ttlMs: number; pollIntervalMs: number };
  };
}

type Rule =
  | { kind: 'string'; default: string; nonEmpty?: boolean; oneOf?: readonly string[]; url?: boolean }
  | { kind: 'int'; default: number; min: number; max: number }
  | { kind: 'number'; default: number; min: number; max: number }
  | { kind: 'string[]'; default: string[] };

const MiB = 1024 * 1024;

/** Keys as they appear in YAML (snake_case), with defaults and constraints. */
const RULES: Record<string, Record<string, Rule | Record<string, Rule>>> = {
  server: {
    host: { kind: 'string', default: '127.0.0.1', nonEmpty: true },
    port: { kind: 'int', default: 3000, min: 0, max: 65535 },
    allowed_origins: { kind: 'string[]', default: [] },
  },
  auth: {
    mode: { kind: 'string', default: 'none', oneOf: ['none', 'proxy_headers', 'proxy_jwt'] },
    trusted_proxies: { kind: 'string[]', default: [] },
    user_header: { kind: 'string', default: 'X-Forwarded-User', nonEmpty: true },
    email_header: { kind: 'string', default: 'X-Forwarded-Email', nonEmpty: true },
    groups_header: { kind: 'string', default: 'X-Forwarded-Groups', nonEmpty: true },
    admin_groups: { kind: 'string[]', default: [] },
    admin_token: { kind: 'string', default: '' },
    jwt_header: { kind: 'string', default: 'X-Jwt-Assertion', nonEmpty: true },
    jwks_url: { kind: 'string', default: '' },
    issuer: { kind: 'string', default: '' },
    audience: { kind: 'string', default: '' },
    algorithms: { kind: 'string[]', default: ['RS256', 'ES256'] },
    user_claim: { kind: 'string', default: 'email', nonEmpty: true },
    groups_claim: { kind: 'string', default: 'groups', nonEmpty: true },
  },
  audit: {
    retention_days: { kind: 'int', default: 0, min: 0, max: 36_500 },
    checkpoint_every: { kind: 'int', default: 1000, min: 1, max: 1_000_000 },
  },
  ollama: {
    host: { kind: 'string', default: 'http://127.0.0.1:11434', url: true },
    model: { kind: 'string', default: 'qwen3:8b', nonEmpty: true },
    temperature: { kind: 'number', default: 0.7, min: 0, max: 2 },
    num_ctx: { kind: 'int', default: 32768, min: 512, max: 1_048_576 },
    keep_alive: { kind: 'string', default: '30m', nonEmpty: true },
    request_timeout_ms: { kind: 'int', default: 600_000, min: 100, max: 86_400_000 },
  },
  database: {
    type: { kind: 'string', default: 'sqlite', oneOf: ['sqlite', 'postgres'] },
    path: { kind: 'string', default: './data/agent.sqlite', nonEmpty: true },
    url: { kind: 'string', default: '' },
  },
  queue: {
    poll_interval_ms: { kind: 'int', default: 1000, min: 10, max: 3_600_000 },
    lease_ms: { kind: 'int', default: 30_000, min: 1000, max: 3_600_000 },
    shutdown_grace_ms: { kind: 'int', default: 30_000, min: 0, max: 3_600_000 },
  },
  workspace: {
    root: { kind: 'string', default: './workspace', nonEmpty: true },
    sandbox: { kind: 'string', default: 'auto', oneOf: ['auto', 'bubblewrap', 'none'] },
    command_timeout_ms: { kind: 'int', default: 120_000, min: 100, max: 3_600_000 },
    capture_bytes: { kind: 'int', default: MiB, min: 1024, max: 64 * MiB },
    max_file_bytes: { kind: 'int', default: 1024 * MiB, min: MiB, max: 1024 * 1024 * MiB },
    max_processes: { kind: 'int', default: 512, min: 16, max: 65_536 },
  },
  agent: {
    max_subtasks: { kind: 'int', default: 8, min: 1, max: 32 },
    max_rounds_per_subtask: { kind: 'int', default: 20, min: 1, max: 500 },
    max_rounds_per_task: { kind: 'int', default: 60, min: 1, max: 2000 },
    tool_output_chars: { kind: 'int', default: 16_000, min: 1000, max: 1_000_000 },
  },
  mcp: {
    images: {
      max_count: { kind: 'int', default: 4, min: 0, max: 64 },
      max_bytes_per_image: { kind: 'int', default: 10 * MiB, min: 1, max: 256 * MiB },
      max_total_bytes: { kind: 'int', default: 20 * MiB, min: 1, max: 1024 * MiB },
    },
    tasks: {
      ttl_ms: { kind: 'int', default: 86_400_000, min: 1000, max: 31_536_000_000 },
      poll_interval_ms: { kind: 'int', default: 1000, min: 10, max: 3_600_000 },
    },
  },
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const isRule = (value: unknown): value is Rule =>
  typeof value === 'object' && value !== null && typeof (value as Rule).kind === 'string';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function checkValue(key: string, rule: Rule, value: unknown, problems: string[]): unknown {
  switch (rule.kind) {
    case 'string':
      if (typeof value !== 'string') return void problems.push(`${key}: expected a string`);
      if (rule.nonEmpty && value.trim() === '') return void problems.push(`${key}: must not be empty`);
      if (rule.oneOf && !rule.oneOf.includes(value))
        return void problems.push(`${key}: must be one of ${rule.oneOf.join(', ')} (got "${value}")`);
      if (rule.url && !URL.canParse(value)) return void problems.push(`${key}: must be a URL (got "${value}")`);
      return value;
    case 'int':
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value) || (rule.kind === 'int' && !Number.isInteger(value)))
        return void problems.push(`${key}: expected ${rule.kind === 'int' ? 'an integer' : 'a number'}`);
      if (value < rule.min || value > rule.max)
        return void problems.push(`${key}: must be between ${rule.min} and ${rule.max} (got ${value})`);
      return value;
    case 'string[]':
      if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
        return void problems.push(`${key}: expected a list of strings`);
      return value;
  }
}

function resolveSection(
  prefix: string,
  rules: Record<string, Rule | Record<string, Rule>>,
  raw: unknown,
  problems: string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (raw !== undefined && raw !== null && !isPlainObject(raw)) {
    problems.push(`${prefix}: expected a mapping`);
    raw = {};
  }
  const given = (raw ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!(key in rules)) problems.push(`${prefix}.${key}: unknown key`);
  }
  for (const [key, rule] of Object.entries(rules)) {
    const name = `${prefix}.${key}`;
    if (isRule(rule)) {
      out[key] = given[key] === undefined ? rule.default : checkValue(name, rule, given[key], problems);
    } else {
      out[key] = resolveSection(name, rule as Record<string, Rule>, given[key], problems);
    }
  }
  return out;
}

const snakeToCamel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function camelize(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [snakeToCamel(k), camelize(v)]));
}

/** Parses `AGENT__OLLAMA__MODEL=x` style overrides into the YAML shape; values are parsed as YAML scalars. */
export function overridesFromEnv(env: NodeJS.ProcessEnv, parseScalar: (text: string) => unknown) {
  const overrides: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(env)) {
    if (!name.startsWith('AGENT__') || text === undefined) continue;
    const path = name.slice('AGENT__'.length).toLowerCase().split('__');
    let node = overrides;
    for (const part of path.slice(0, -1)) node = (node[part] = isPlainObject(node[part]) ? node[part] : {}) as never;
    node[path[path.length - 1]] = parseScalar(text);
  }
  return overrides;
}

export function deepMerge(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(base[k], v);
  return out;
}

/** Validates a parsed YAML document; throws ConfigError naming every bad key. */
export function validateConfig(raw: unknown): AgentConfig {
  const problems: string[] = [];
  if (raw !== undefined && raw !== null && !isPlainObject(raw)) throw new ConfigError(['(root): expected a mapping']);
  const given = (raw ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(given)) if (!(key in RULES)) problems.push(`${key}: unknown key`);
  const resolved: Record<string, unknown> = {};
  for (const [section, rules] of Object.entries(RULES)) {
    resolved[section] = resolveSection(section, rules, given[section], problems);
  }
  const config = camelize(resolved) as AgentConfig;
  if (problems.length === 0 && config.database.type === 'postgres' && !config.database.url)
    problems.push('database.url: required when database.type is postgres');
  if (problems.length === 0 && config.mcp.images.maxBytesPerImage > config.mcp.images.maxTotalBytes)
    problems.push('mcp.images.max_bytes_per_image: must not exceed mcp.images.max_total_bytes');
  if (problems.length === 0) problems.push(...authProblems(config));
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

const OPEN_TO_ALL = ['0.0.0.0/0', '::/0', '*'];
const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

/**
 * Identity settings that would let anyone in are refused at boot: no authentication on a non-loopback
 * address, and trusted-proxy lists that trust everyone (the Gitea CVE-2026-20896 and oauth2-proxy lesson).
 */
function authProblems({ auth, server }: AgentConfig): string[] {
  const problems: string[] = [];
  if (auth.mode === 'none' && !LOOPBACK.includes(server.host)) {
    problems.push(`auth.mode: none serves one local user and requires server.host on loopback (got "${server.host}")`);
  }
  if (auth.mode === 'proxy_headers') {
    if (auth.trustedProxies.length === 0) problems.push('auth.trusted_proxies: required (the addresses of the SSO proxy) when auth.mode is proxy_headers');
    for (const entry of auth.trustedProxies) {
      if (OPEN_TO_ALL.includes(entry.trim())) problems.push(`auth.trusted_proxies: "${entry}" would trust every client`);
      else if (!parseCidr(entry)) problems.push(`auth.trusted_proxies: "${entry}" is not an IP address or CIDR`);
    }
  }
  if (auth.mode === 'proxy_jwt') {
    if (!URL.canParse(auth.jwksUrl)) problems.push('auth.jwks_url: a pinned JWKS URL is required when auth.mode is proxy_jwt');
    if (!auth.issuer) problems.push('auth.issuer: required when auth.mode is proxy_jwt');
    if (!auth.audience) problems.push('auth.audience: required when auth.mode is proxy_jwt');
    const weak = auth.algorithms.filter((alg) => alg === 'none' || alg.startsWith('HS'));
    if (weak.length > 0) problems.push(`auth.algorithms: ${weak.join(', ')} not allowed (asymmetric algorithms only)`);
  }
  if (auth.adminToken && auth.adminToken.length < 24) problems.push('auth.admin_token: must be at least 24 characters');
  return problems;
}

/** `10.0.0.0/8`, `2001:db8::/32` or a single address; null when it is neither. */
export function parseCidr(entry: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | null {
  const [address, prefixText] = entry.trim().split('/');
  const family = isIP(address) === 4 ? 'ipv4' : isIP(address) === 6 ? 'ipv6' : null;
  if (!family) return null;
  const max = family === 'ipv4' ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) return null;
  return { address, prefix, family };
}
