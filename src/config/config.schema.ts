import { z } from 'zod';
import { patternProblem } from './command-pattern-syntax.js';
import { parseCidr } from './cidr.js';
import { cronProblem } from './cron-spec.js';
import { RequestLimits } from './request-limits.js';
import { mcpServers } from './mcp-servers.schema.js';
import { skillsSection } from './skills.schema.js';

/**
 * The configuration's one schema: keys as they appear in YAML (snake_case), their defaults, their
 * constraints and the boot-time message for each bad value. The TypeScript type (`AgentConfig`) is
 * inferred from it, and `validateConfig` turns its issues into messages naming the dotted key.
 */

const MiB = 1024 * 1024;

const isHttpUrl = (value: string) => URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol);

const hasUserinfo = (value: string) => URL.canParse(value) && (new URL(value).username !== '' || new URL(value).password !== '');
const CREDENTIALS_IN_URL =
  'must not hold credentials (user:password@): send them as a header instead, e.g. ollama.headers: { Authorization: "Basic <base64 of user:password>" } or "Bearer <token>"';

/** A string; `nonEmpty` refuses blank values, `httpUrl` anything but an http:// or https:// URL without credentials. */
function text(fallback: string, rules: { nonEmpty?: boolean; httpUrl?: boolean } = {}) {
  let schema = z.string({ error: 'expected a string' });
  if (rules.nonEmpty) schema = schema.refine((value) => value.trim() !== '', { error: 'must not be empty', abort: true });
  // Checked first, and the value never echoed: a URL is printed in errors and logs, and the ollama
  // client would not send `user:pass@` anyway (fetch refuses such URLs). Credentials go in `ollama.headers`.
  if (rules.httpUrl) schema = schema.refine((value) => !hasUserinfo(value), { error: CREDENTIALS_IN_URL, abort: true });
  if (rules.httpUrl) schema = schema.refine(isHttpUrl, { error: (issue) => `must be an http:// or https:// URL (got "${String(issue.input)}")` });
  return schema.default(fallback);
}

/** One of a fixed list of strings; the first is the default. */
function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z
    .enum(values, {
      error: (issue) => (typeof issue.input === 'string' ? `must be one of ${values.join(', ')} (got "${issue.input}")` : 'expected a string'),
    })
    .default(values[0] as T[0]);
}

function bounded(kind: 'an integer' | 'a number', fallback: number, min: number, max: number) {
  let schema = z.number({ error: `expected ${kind}` });
  if (kind === 'an integer') schema = schema.refine(Number.isInteger, { error: 'expected an integer', abort: true });
  return schema.refine((value) => value >= min && value <= max, { error: (issue) => `must be between ${min} and ${max} (got ${String(issue.input)})` }).default(fallback);
}
const integer = (fallback: number, min: number, max: number) => bounded('an integer', fallback, min, max);
const decimal = (fallback: number, min: number, max: number) => bounded('a number', fallback, min, max);

/** true or false. */
const flag = (fallback: boolean) => z.boolean({ error: 'expected true or false' }).default(fallback);

/**
 * `ollama.think`: `auto` sends `think` only to models with the `thinking` capability; the levels are
 * gpt-oss's. YAML reads `think: true` as a boolean, taken here as the word.
 */
const think = z.preprocess((value) => (typeof value === 'boolean' ? String(value) : value), oneOf(['auto', 'true', 'false', 'low', 'medium', 'high']));

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** HTTP headers sent with every request to Ollama (a reverse proxy's credentials): names are tokens, values one line. */
const headerMap = z
  .record(z.string(), z.string({ error: 'expected a string value per header' }), { error: 'expected a mapping of header names to values' })
  .refine((headers) => Object.entries(headers).every(([name, value]) => HEADER_NAME.test(name) && !/[\r\n\0]/.test(value)), {
    error: 'header names must be HTTP tokens and values single lines',
  })
  .default(() => ({}));

/** An http(s) URL without credentials, or empty (the feature it enables stays off). */
const optionalHttpUrl = z
  .string({ error: 'expected a string' })
  .refine((value) => value === '' || !hasUserinfo(value), { error: CREDENTIALS_IN_URL, abort: true })
  .refine((value) => value === '' || isHttpUrl(value), { error: (issue) => `must be an http:// or https:// URL (got "${String(issue.input)}")` })
  .default('');

/** `quotas.tokens_per_user_day_by_group`: group name → tokens per member and day (0: none for that group). Kept as pairs: group names stay as written. */
const groupQuotas = z
  .record(z.string(), z.number({ error: 'expected a number of tokens per group' }), { error: 'expected a mapping of group names to tokens per day' })
  .refine((groups) => Object.values(groups).every((tokens) => Number.isSafeInteger(tokens) && tokens >= 0), { error: 'each group needs a whole number of tokens, 0 or more' })
  .transform((groups) => Object.entries(groups))
  .default(() => []);

const PUBLIC_ROUTES = ['agent_card', 'models'];

/** Tier names: Chat model ids are `ollama-agent-<tier>`; `default` is `ollama.model` and `direct` is the direct mode's id. */
const TIER_NAME = /^[a-z0-9][a-z0-9_]{0,31}$/;

/**
 * `ollama.models`: tier name → Ollama model, beside the default tier (`ollama.model`), as a list of pairs in the
 * order written (what `model-tiers.ts` reads).
 */
const tierModels = z
  .record(z.string(), z.string({ error: 'expected a model name per tier' }), { error: 'expected a mapping of tier names to Ollama models' })
  .refine((tiers) => Object.entries(tiers).every(([tier, model]) => TIER_NAME.test(tier) && tier !== 'default' && tier !== 'direct' && model.trim() !== ''), {
    error: 'tier names are 1 to 32 lower-case letters, digits or _ (not default or direct), each with a model name',
  })
  .transform((tiers) => Object.entries(tiers))
  .default(() => []);

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');
/** A list of strings, refused as a whole (one message for the key, not one per item). */
const list = (fallback: readonly string[]) => z.custom<string[]>(isStringList, { error: 'expected a list of strings' }).default(() => [...fallback]);

/** `agent.approvals.allow`: each command pattern is checked, and a bad one is named by its index. */
const commandPatterns = z
  .custom<string[]>(isStringList, { error: 'expected a list of strings' })
  .superRefine((patterns, context) => {
    patterns.forEach((pattern, index) => {
      const problem = patternProblem(pattern);
      if (problem) context.addIssue({ code: 'custom', path: [index], message: problem });
    });
  })
  .default(() => []);

const hasNoCredentials = (value: string) => !hasUserinfo(value);
/** `a2a.push.allowed_urls`: http(s) URL prefixes without credentials. */
const pushUrls = z
  .custom<string[]>(isStringList, { error: 'expected a list of strings' })
  .superRefine((prefixes, context) => {
    prefixes.forEach((prefix, index) => {
      if (!/^https?:\/\//.test(prefix)) context.addIssue({ code: 'custom', path: [index], message: `must start with http:// or https:// (got "${prefix}")` });
      else if (URL.canParse(prefix) && !hasNoCredentials(prefix)) context.addIssue({ code: 'custom', path: [index], message: CREDENTIALS_IN_URL });
    });
  })
  .default(() => []);

/** `webhooks`: where Task endings are posted, signed with the secret, for the owners and groups listed. */
const webhookList = z
  .array(
    z.strictObject(
      {
        url: z.string({ error: 'expected a string' }).refine(isHttpUrl, { error: 'must be an http:// or https:// URL' }).refine(hasNoCredentials, { error: CREDENTIALS_IN_URL }),
        secret: z.string({ error: 'expected a string' }).min(16, { error: 'must be at least 16 characters' }),
        owners: list([]),
        groups: list([]),
      },
      { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown key' : 'expected a mapping with url, secret, owners, groups') },
    ),
    { error: 'expected a list of webhooks' },
  )
  .default(() => []);

/** A notification target of a schedule: signed like `webhooks` (X-OAM-Signature with the secret). */
const notifyTarget = z.strictObject(
  {
    url: z.string({ error: 'expected a string' }).refine(isHttpUrl, { error: 'must be an http:// or https:// URL' }).refine(hasNoCredentials, { error: CREDENTIALS_IN_URL }),
    secret: z.string({ error: 'expected a string' }).min(16, { error: 'must be at least 16 characters' }),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown key' : 'expected a mapping with url and secret') },
);

/**
 * `schedules`: schedules the operator declares, each run as its `owner` (with `groups`), kept in the
 * database under the name (a change here changes it at the next start; one removed here is removed).
 */
const declaredSchedules = z
  .array(
    z.strictObject(
      {
        name: z.string({ error: 'expected a string' }).refine((value) => value.trim() !== '' && value.length <= 200, { error: 'must be 1 to 200 characters' }),
        owner: z.string({ error: 'expected a string' }).refine((value) => value.trim() !== '' && value.length <= 320, { error: 'must be 1 to 320 characters' }),
        groups: list([]),
        cron: z.string({ error: 'expected a string' }),
        timezone: text('UTC'),
        request: z.string({ error: 'expected a string' }).refine((value) => value.trim() !== '', { error: 'must not be empty' }),
        session: oneOf(['new', 'continue']),
        tier: text('default', { nonEmpty: true }),
        enabled: flag(true),
        approvals: oneOf(['deny', 'wait']),
        catch_up: oneOf(['none', 'last']),
        notify: notifyTarget.optional(),
      },
      { error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown key' : 'expected a mapping with name, owner, cron, request') },
    ),
    { error: 'expected a list of schedules' },
  )
  .superRefine((schedules, context) => {
    schedules.forEach((schedule, index) => {
      const problem = cronProblem(schedule.cron, schedule.timezone);
      if (problem) context.addIssue({ code: 'custom', path: [index, problem.field], message: problem.message });
      if (schedules.findIndex((other) => other.name === schedule.name) < index) context.addIssue({ code: 'custom', path: [index, 'name'], message: 'names another schedule too' });
    });
  })
  .default(() => []);

/**
 * A mapping of keys; every key it does not name is refused. An absent or empty (`null` in YAML)
 * section takes every default.
 */
function section<S extends z.ZodRawShape>(shape: S) {
  const mapping = z.strictObject(shape, {
    error: (issue) => (issue.code === 'unrecognized_keys' ? 'unknown key' : 'expected a mapping'),
  });
  return z.preprocess((value) => value ?? undefined, mapping.prefault({} as z.input<typeof mapping>));
}

/** A scope name as RFC 6749 allows it (no spaces, quotes or backslashes: it goes in a WWW-Authenticate quoted string). */
const scopeName = (fallback: string) =>
  text(fallback, { nonEmpty: true }).refine((value) => /^[\x21\x23-\x5B\x5D-\x7E]+$/.test(value), {
    error: 'must be one scope name (printable ASCII, no spaces, quotes or backslashes)',
  });

/**
 * `auth.oauth`: the service as an OAuth 2.1 resource server (`auth.mode: oauth`). The issuer's metadata
 * (RFC 8414 or OpenID discovery) is fetched at start-up; every other URL defaults from it.
 */
const oauthSection = section({
  issuer: text(''),
  // The canonical URL of this service (RFC 8707/9728 `resource`): what clients ask tokens for.
  resource: text(''),
  // What the token's `aud` must name; empty: the resource (some issuers use an API identifier instead).
  audience: text(''),
  jwks_url: text(''),
  algorithms: list(['RS256', 'PS256', 'ES256']),
  introspection: section({
    // RFC 7662, for opaque (non-JWT) tokens; on when client_id is set; url empty: the metadata's introspection_endpoint.
    url: text(''),
    client_id: text(''),
    client_secret: text(''),
  }),
  user_claim: text('sub', { nonEmpty: true }),
  groups_claim: text('groups', { nonEmpty: true }),
  // The caller's email, for an MCP server's {email} header: a claim that is absent or not an email names none.
  email_claim: text('email', { nonEmpty: true }),
  admin_groups: list([]),
  scopes: section({
    mcp: scopeName('mcp:exec'),
    chat: scopeName('chat:exec'),
    a2a: scopeName('a2a:exec'),
    admin: scopeName('admin'),
  }),
  clock_skew_s: integer(60, 0, 600),
  // How long after fetching the issuer's keys an unknown key id waits before they are fetched again.
  jwks_cooldown_s: integer(30, 0, 3600),
  // Routes answered without a token: `agent_card` (/.well-known/agent-card.json), `models` (GET /v1/models).
  public_routes: z
    .custom<string[]>((value) => isStringList(value) && value.every((item) => PUBLIC_ROUTES.includes(item)), {
      error: `expected a list of ${PUBLIC_ROUTES.join(', ')}`,
    })
    .default(() => []),
  console: section({
    // The admin console's own OIDC client (authorization code + PKCE); empty: the console has no sign-in.
    client_id: text(''),
    client_secret: text(''),
    scopes: text('openid profile email', { nonEmpty: true }),
  }),
});

const shape = {
  server: section({
    host: text('127.0.0.1', { nonEmpty: true }),
    port: integer(3000, 0, 65535),
    allowed_origins: list([]),
    // A backstop against running out of file descriptors, above any legitimate burst (T5.10: 1 000 concurrent
    // agent_run calls must all be accepted); memory is bounded by max_buffered_bytes, slow clients by the timeouts.
    max_connections: integer(4096, 1, 65_536),
    max_buffered_bytes: integer(256 * MiB, MiB, 64 * 1024 * MiB),
    headers_timeout_ms: integer(10_000, 1000, 600_000),
    request_timeout_ms: integer(120_000, 1000, 3_600_000),
    keep_alive_timeout_ms: integer(5_000, 1000, 600_000),
  }),
  auth: section({
    mode: oneOf(['none', 'proxy_headers', 'proxy_jwt', 'oauth']),
    trusted_proxies: list([]),
    user_header: text('X-Forwarded-User', { nonEmpty: true }),
    // Honoured only when named: a proxy that sets just one identity header may pass a client's own other
    // one through, so a fallback header is opt-in (issue 20). Empty: the user header alone names the caller.
    email_header: text(''),
    groups_header: text('X-Forwarded-Groups', { nonEmpty: true }),
    admin_groups: list([]),
    admin_token: text(''),
    jwt_header: text('X-Jwt-Assertion', { nonEmpty: true }),
    jwks_url: text(''),
    issuer: text(''),
    audience: text(''),
    algorithms: list(['RS256', 'ES256']),
    user_claim: text('email', { nonEmpty: true }),
    groups_claim: text('groups', { nonEmpty: true }),
    email_claim: text('email', { nonEmpty: true }),
    oauth: oauthSection,
  }),
  audit: section({
    retention_days: integer(0, 0, 36_500),
    checkpoint_every: integer(1000, 1, 1_000_000),
  }),
  ollama: section({
    host: text('http://127.0.0.1:11434', { httpUrl: true }),
    headers: headerMap,
    model: text('qwen3:8b', { nonEmpty: true }),
    models: tierModels,
    temperature: decimal(0.7, 0, 2),
    // -1: no seed is sent and Ollama draws one per call; the eval sets 42 so its runs repeat like the bare loop's.
    seed: integer(-1, -1, 2_147_483_647),
    num_ctx: integer(32768, 512, 1_048_576),
    // 0: num_ctx / 8, the share the prompt budget keeps free for the answer.
    num_predict: integer(0, 0, 524_288),
    keep_alive: text('30m', { nonEmpty: true }),
    request_timeout_ms: integer(600_000, 100, 86_400_000),
    think,
    stall_timeout_ms: integer(60_000, 100, 3_600_000),
  }),
  database: section({
    type: oneOf(['sqlite', 'postgres']),
    path: text('./data/agent.sqlite', { nonEmpty: true }),
    url: text(''),
  }),
  queue: section({
    poll_interval_ms: integer(1000, 10, 3_600_000),
    lease_ms: integer(30_000, 1000, 3_600_000),
    shutdown_grace_ms: integer(30_000, 0, 3_600_000),
    // Only a fallback: followers of a Task are pushed its events (in process, or LISTEN/NOTIFY between
    // replicas); after this long without one they read its row, trace and answer draft anyway.
    progress_poll_ms: integer(2000, 10, 60_000),
    // Tasks one user may have queued (not yet running) at once; past it agent_run, Chat and A2A refuse.
    max_queued_per_user: integer(50, 1, 1_000_000),
  }),
  workspace: section({
    root: text('./workspace', { nonEmpty: true }),
    sandbox: oneOf(['auto', 'bubblewrap', 'none']),
    command_timeout_ms: integer(120_000, 100, 3_600_000),
    capture_bytes: integer(MiB, 1024, 64 * MiB),
    max_file_bytes: integer(1024 * MiB, MiB, 1024 * 1024 * MiB),
    max_processes: integer(512, 16, 65_536),
    isolation: oneOf(['session', 'shared']),
    template: text(''),
    max_session_bytes: integer(1024 * MiB, 1024, 1024 * 1024 * MiB),
    // Files, directories and links in one session workspace: bounds the tree the quota is measured over.
    max_session_files: integer(100_000, 10, 10_000_000),
    // Each command process's heap (RLIMIT_DATA), and the size of its private /tmp.
    max_memory_bytes: integer(1024 * MiB, 16 * MiB, 1024 * 1024 * MiB),
    retention_days: integer(0, 0, 36_500),
  }),
  // Workspace history (checkpoints before and after each Task, diffs, undo, fork): a bare git repository
  // per session workspace under `dir`, outside every workspace; `max_bytes` bounds each one, `max_total_bytes` all.
  history: section({
    enabled: flag(true),
    // Empty: `history/` beside the SQLite database file, or ./data/history with PostgreSQL.
    dir: text(''),
    max_files: integer(100_000, 100, 10_000_000),
    large_file_bytes: integer(16 * MiB, 1024, 4096 * MiB),
    max_bytes: integer(2048 * MiB, MiB, 1024 * 1024 * MiB),
    // Every session's repository together: past it, the least recently used sessions' checkpoints go.
    max_total_bytes: integer(20 * 1024 * MiB, MiB, 1024 * 1024 * MiB),
    diff_max_lines_per_file: integer(2000, 10, 1_000_000),
  }),
  agent: section({
    max_subtasks: integer(8, 1, 32),
    max_rounds_per_subtask: integer(20, 1, 500),
    max_rounds_per_task: integer(60, 1, 2000),
    tool_output_chars: integer(16_000, 1000, 1_000_000),
    text_tools: flag(true),
    // What one run may spend before it stops offering tools and answers with a summary (issue 35): only runaway work reaches these.
    budgets: section({
      max_model_calls: integer(200, 1, 100_000),
      max_tool_calls: integer(400, 1, 100_000),
      max_tokens: integer(4_000_000, 1000, 1_000_000_000),
      max_wall_ms: integer(3_600_000, 1000, 604_800_000),
    }),
    // A person's corrections to a running Task (issue 35): `mcp` lets agent_run with a busy session's id join its Task.
    steering: section({
      mcp: flag(false),
      max_per_task: integer(10, 0, 1000),
    }),
    approvals: section({
      mode: oneOf(['never', 'commands', 'changes']),
      allow: commandPatterns,
      wait_ms: integer(120_000, 0, 86_400_000),
    }),
    mcp_servers: mcpServers,
  }),
  skills: skillsSection,
  log: section({
    format: oneOf(['text', 'json']),
  }),
  mcp: section({
    // The human-readable texts of agent_run / agent_status (`message:`): ja, as specified, or en. Keys and formats never change.
    locale: oneOf(['ja', 'en']),
    images: section({
      max_count: integer(4, 0, 64),
      max_bytes_per_image: integer(10 * MiB, 1, 256 * MiB),
      max_total_bytes: integer(20 * MiB, 1, 1024 * MiB),
    }),
    tasks: section({
      ttl_ms: integer(86_400_000, 1000, 31_536_000_000),
      poll_interval_ms: integer(1000, 10, 3_600_000),
    }),
    resources: section({
      max_read_bytes: integer(10 * MiB, 1, 256 * MiB),
    }),
    // Files a Chat API or A2A request brings along (written to inputs/ of the session workspace): how many, and their bytes together.
    files: section({
      max_count: integer(8, 0, 64),
      max_bytes: integer(20 * MiB, 1, 1024 * MiB),
    }),
  }),
  chat: section({
    model_id: text('ollama-agent', { nonEmpty: true }),
    // Clients and proxies drop idle streams: a comment at least every 15 s keeps one open.
    keepalive_ms: integer(15_000, 10, 15_000),
  }),
  a2a: section({
    // The JSON-RPC URL the Agent Card names; empty: http://<server.host>:<server.port>/a2a (set it behind a proxy).
    public_url: text('').refine((value) => value === '' || /^https?:\/\/[^\s]+$/.test(value), { error: (issue) => `must be an http(s) URL (got "${String(issue.input)}")` }),
    push: section({
      // URL prefixes a push-notification config (and a webhook) may name; empty: A2A push is off. A loopback,
      // link-local or private address is reached only when a prefix names it as an IP literal.
      allowed_urls: pushUrls,
      // How A2A push requests authenticate: jwt (signed, verifiable from /.well-known/jwks.json) or only the config's token.
      auth: oneOf(['jwt', 'token']),
      // A delivery is retried with backoff until this long after the event, then given up (audited either way).
      retry_for_ms: integer(600_000, 1000, 86_400_000),
      timeout_ms: integer(5000, 100, 60_000),
    }),
  }),
  // Signed JSON posts when a Task of a listed owner or group ends, whichever surface accepted it.
  webhooks: webhookList,
  schedules: declaredSchedules,
  scheduler: section({
    // How often each replica looks for schedules that are due (the finest a six-field cron can fire).
    tick_ms: integer(1000, 100, 60_000),
    // A fire found later than this after its time was missed (every replica was down): not run, unless its schedule says catch_up: last.
    misfire_grace_ms: integer(30_000, 1000, 3_600_000),
    // Schedules, and triggers, one user may have.
    max_per_user: integer(50, 1, 10_000),
  }),
  triggers: section({
    // The largest event body POST /v1/triggers/:id reads (refused with 413 before the rest is read); given to the agent as a file, so mcp.files.max_bytes bounds it too.
    max_body_bytes: integer(MiB, 1024, 16 * MiB),
    // Signed deliveries one trigger takes in any sliding minute, counted in the database across replicas; past it 429 with Retry-After.
    rate_per_minute: integer(60, 1, 100_000),
    // Refused deliveries (signature, body, size, unknown trigger) one client address gets heard per trigger and minute in
    // each process (past it 429 before the body is read), and a trigger's refusals audited one by one a minute (the rest in one summary).
    refused_per_minute: integer(10, 1, 10_000),
  }),
  // OpenTelemetry traces (issue 39): off while otlp_endpoint is empty; the SDK is not even loaded then.
  telemetry: section({
    // The collector's base URL (as OTEL_EXPORTER_OTLP_ENDPOINT): spans go to <endpoint>/v1/traces.
    otlp_endpoint: optionalHttpUrl,
    otlp_protocol: oneOf(['http/protobuf', 'http/json']),
    service_name: text('ollama-agent-mcp', { nonEmpty: true }),
    // Request text, answers, prompts and file content in span attributes: never unless this is true.
    capture_content: flag(false),
  }),
  // Tokens (input + output) one user may spend per UTC day; 0: no quota. A group's value replaces it for its members (the largest wins).
  quotas: section({
    tokens_per_user_day: integer(0, 0, Number.MAX_SAFE_INTEGER),
    tokens_per_user_day_by_group: groupQuotas,
  }),
};

/** The configuration as written in YAML, every default filled in. */
export type ConfigDocument = z.output<ReturnType<typeof section<typeof shape>>>;

interface Problem {
  path: string[];
  message: string;
}

const OPEN_TO_ALL = ['0.0.0.0/0', '::/0', '*'];
const LOOPBACK = ['127.0.0.1', 'localhost', '::1'];

/**
 * Identity settings that would let anyone in are refused at boot: no authentication on a non-loopback
 * address, and trusted-proxy lists that trust everyone (the Gitea CVE-2026-20896 and oauth2-proxy lesson).
 */
function authProblems({ auth, server }: ConfigDocument): Problem[] {
  const problems: Problem[] = [];
  const problem = (key: string, message: string) => problems.push({ path: ['auth', key], message });
  if (auth.mode === 'none' && !LOOPBACK.includes(server.host)) {
    problem('mode', `none serves one local user and requires server.host on loopback (got "${server.host}")`);
  }
  if (auth.mode === 'proxy_headers') {
    if (auth.trusted_proxies.length === 0) problem('trusted_proxies', 'required (the addresses of the SSO proxy) when auth.mode is proxy_headers');
    for (const entry of auth.trusted_proxies) {
      if (OPEN_TO_ALL.includes(entry.trim())) problem('trusted_proxies', `"${entry}" would trust every client`);
      else if (!parseCidr(entry)) problem('trusted_proxies', `"${entry}" is not an IP address or CIDR`);
    }
  }
  if (auth.mode === 'proxy_jwt') {
    if (!URL.canParse(auth.jwks_url)) problem('jwks_url', 'a pinned JWKS URL is required when auth.mode is proxy_jwt');
    if (!auth.issuer) problem('issuer', 'required when auth.mode is proxy_jwt');
    if (!auth.audience) problem('audience', 'required when auth.mode is proxy_jwt');
    const weak = auth.algorithms.filter((alg) => alg === 'none' || alg.startsWith('HS'));
    if (weak.length > 0) problem('algorithms', `${weak.join(', ')} not allowed (asymmetric algorithms only)`);
  }
  if (auth.admin_token && auth.admin_token.length < 24) problem('admin_token', 'must be at least 24 characters');
  if (auth.mode === 'oauth') {
    problems.push(...oauthProblems(auth.oauth));
    if (auth.admin_groups.length > 0) problem('admin_groups', 'not used when auth.mode is oauth: set auth.oauth.admin_groups');
  }
  return problems;
}

const isLoopbackUrl = (url: URL) => ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);

/**
 * An issuer, resource or key URL: https (plain http only on loopback, for a local test issuer), no
 * credentials, no fragment; the issuer also no query (RFC 8414 §2).
 */
function urlProblem(value: string, { query = true } = {}): string | null {
  if (!URL.canParse(value)) return `must be an https:// URL (got "${value}")`;
  const url = new URL(value);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) return `must be an https:// URL (http:// only on loopback; got "${value}")`;
  if (url.username || url.password) return 'must not hold credentials (user:password@)';
  if (url.hash) return 'must not have a fragment';
  if (!query && url.search) return 'must not have a query string';
  return null;
}

/** `auth.oauth` when auth.mode is oauth: what tokens are checked against must be named, and pinned. */
function oauthProblems(oauth: ConfigDocument['auth']['oauth']): Problem[] {
  const problems: Problem[] = [];
  const problem = (key: string, message: string) => problems.push({ path: ['auth', 'oauth', ...key.split('.')], message });
  const url = (key: string, value: string, options?: { query?: boolean }) => {
    const found = urlProblem(value, options);
    if (found) problem(key, found);
  };
  if (!oauth.issuer) problem('issuer', 'required when auth.mode is oauth (the authorization server, e.g. https://sso.example.com/realms/acme)');
  else url('issuer', oauth.issuer, { query: false });
  if (!oauth.resource) problem('resource', "required when auth.mode is oauth (this service's public URL, e.g. https://agent.example.com)");
  else url('resource', oauth.resource);
  if (oauth.jwks_url) url('jwks_url', oauth.jwks_url);
  if (oauth.algorithms.length === 0) problem('algorithms', 'must name at least one algorithm');
  const weak = oauth.algorithms.filter((alg) => alg === 'none' || alg.startsWith('HS'));
  if (weak.length > 0) problem('algorithms', `${weak.join(', ')} not allowed (asymmetric algorithms only)`);
  const { introspection, console: signIn } = oauth;
  if (introspection.url) url('introspection.url', introspection.url);
  if ((introspection.url || introspection.client_secret) && !introspection.client_id) problem('introspection.client_id', 'required to call the introspection endpoint');
  if (introspection.client_id && !introspection.client_secret) problem('introspection.client_secret', 'required with introspection.client_id');
  // An ID token names the console's client as its audience: were that the API's audience, one could be replayed as an access token.
  if (signIn.client_id && signIn.client_id === (oauth.audience || oauth.resource)) problem('console.client_id', 'must differ from the audience access tokens name');
  if (signIn.client_id && !signIn.scopes.split(' ').includes('openid')) problem('console.scopes', 'must include openid');
  return problems;
}

/** Rules across keys, checked in order once every key is valid on its own; the first that fails is reported. */
function crossKeyProblems(config: ConfigDocument): Problem[] {
  if (config.database.type === 'postgres' && !config.database.url) return [{ path: ['database', 'url'], message: 'required when database.type is postgres' }];
  if (config.mcp.images.max_bytes_per_image > config.mcp.images.max_total_bytes)
    return [{ path: ['mcp', 'images', 'max_bytes_per_image'], message: 'must not exceed mcp.images.max_total_bytes' }];
  if (config.ollama.num_predict > config.ollama.num_ctx / 2)
    return [{ path: ['ollama', 'num_predict'], message: `must not exceed half of ollama.num_ctx (${Math.floor(config.ollama.num_ctx / 2)}): the rest is the room for the prompt` }];
  if (config.workspace.isolation === 'shared' && config.auth.mode !== 'none') {
    const message = `shared lets every user's Tasks read and change each other's files; use session when auth.mode is ${config.auth.mode}`;
    return [{ path: ['workspace', 'isolation'], message }];
  }
  if (config.workspace.sandbox === 'none' && config.auth.mode !== 'none') {
    const message = `none runs commands unconfined, where they could reach other sessions' files; use auto or bubblewrap when auth.mode is ${config.auth.mode}`;
    return [{ path: ['workspace', 'sandbox'], message }];
  }
  const tierless = config.schedules.findIndex((schedule) => schedule.tier !== 'default' && !config.ollama.models.some(([tier]) => tier === schedule.tier));
  if (tierless >= 0) return [{ path: ['schedules', String(tierless), 'tier'], message: 'must be default or a tier of ollama.models' }];
  const unlistedNotify = config.schedules.findIndex((schedule) => schedule.notify && !config.a2a.push.allowed_urls.some((prefix) => schedule.notify!.url.startsWith(prefix)));
  if (unlistedNotify >= 0)
    return [{ path: ['schedules', String(unlistedNotify), 'notify', 'url'], message: 'must start with one of a2a.push.allowed_urls (the one allowlist for every outgoing push)' }];
  const unlisted = config.webhooks.findIndex((hook) => !config.a2a.push.allowed_urls.some((prefix) => hook.url.startsWith(prefix)));
  if (unlisted >= 0) return [{ path: ['webhooks', String(unlisted), 'url'], message: 'must start with one of a2a.push.allowed_urls (the one allowlist for every outgoing push)' }];
  // A delivery is stored by its URL and signed with that URL's secret: a second webhook on it would get the first one's.
  const repeated = config.webhooks.findIndex((hook, index) => config.webhooks.findIndex((other) => other.url === hook.url) !== index);
  if (repeated >= 0) {
    const first = config.webhooks.findIndex((hook) => hook.url === config.webhooks[repeated].url);
    const message = `the same URL as webhooks.${first} (each URL has one secret: merge their owners and groups, or give the receiver two URLs)`;
    return [{ path: ['webhooks', String(repeated), 'url'], message }];
  }
  const server = serverProblems(config);
  return server.length > 0 ? server : authProblems(config);
}

/** Limits of the HTTP server that contradict each other or the request size the image limits allow. */
function serverProblems({ server, mcp }: ConfigDocument): Problem[] {
  const { largest } = new RequestLimits(mcp.images.max_total_bytes, mcp.files.max_bytes);
  if (server.max_buffered_bytes < largest)
    return [
      { path: ['server', 'max_buffered_bytes'], message: `must be at least the largest request body, ${largest} bytes (from mcp.images.max_total_bytes and mcp.files.max_bytes)` },
    ];
  // node:http refuses to start with a header timeout longer than the whole request's.
  if (server.headers_timeout_ms > server.request_timeout_ms) return [{ path: ['server', 'headers_timeout_ms'], message: 'must not exceed server.request_timeout_ms' }];
  return [];
}

/** The whole document; the cross-key rules run only once every key is valid on its own. */
export const configSchema = section(shape).superRefine(
  (config, context) => {
    for (const { path, message } of crossKeyProblems(config)) context.addIssue({ code: 'custom', path, message });
  },
  { when: (payload) => payload.issues.length === 0 },
);
