import { beforeAll, describe, expect, it } from '@jest/globals';
import { isAscii } from 'node:buffer';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { useStack } from '../support/e2e-stack.js';
import { pollUntil } from '../support/poll.js';
import { fieldsOf, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { PROXY_AUTH, as } from '../support/proxy-identity.js';
import { freePort, type ServiceProcess } from '../support/service-process.js';

const CARD_SCHEMA = JSON.parse(readFileSync(join(import.meta.dirname, '../support/a2a-1.0-agent-card.schema.json'), 'utf8'));
const hasCase = (value: unknown): boolean => typeof value === 'object' && value !== null && (Object.hasOwn(value, '$case') || Object.values(value).some(hasCase));

/** The smaller points of the first-run trial, each against the built service. */
describe('first-run details', () => {
  const stack = useStack({ config: { auth: PROXY_AUTH, mcp: { locale: 'en' } } });
  // A second service whose Ollama is unreachable (nothing listens on the loopback's port 9), which also logs what
  // Node's own module loader loads (NODE_DEBUG=module).
  const unreachable = useStack({ config: { ollama: { host: 'http://127.0.0.1:9' } }, env: { NODE_DEBUG: 'module' } });
  const { ollama } = stack;
  let service: ServiceProcess;
  let base: string;

  beforeAll(() => void ({ service, base } = stack));

  it('shows the real address on the front page', async () => {
    const page = await (await fetch(`${base}/`)).text();
    expect(page).toContain(`claude mcp add --transport http agent http://127.0.0.1:${service.port}/mcp`);
    expect(page).not.toContain('127.0.0.1:3000');
  });

  it('serves the A2A 1.0 Agent Card as the protocol’s JSON, valid by the 1.0 schema (no internal $case), and the 0.3 card still', async () => {
    const card = await (await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json();
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(CARD_SCHEMA);
    expect(validate(card) ? [] : validate.errors).toEqual([]);
    // What the SDK's handler wrote before: the internal oneof form, which the schema refuses.
    const leaked = { ...card, securitySchemes: { sso_proxy: { scheme: { $case: 'apiKeySecurityScheme', value: { location: 'header', name: 'X-Forwarded-User' } } } } };
    expect(validate(leaked)).toBe(false);
    expect(hasCase(card)).toBe(false);
    expect(card.securitySchemes).toEqual({ sso_proxy: { apiKeySecurityScheme: { description: expect.any(String), location: 'header', name: 'X-Forwarded-User' } } });
    expect(card.securityRequirements).toEqual([{ schemes: { sso_proxy: {} } }]);
    // The Task and its metadata (token usage, agent steps) the service writes on a SendMessage: protocol JSON too.
    ollama.enqueue({ content: 'listed' });
    const rpc = await fetch(`${base}/a2a`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...as('erin@example.com') },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'List the files' }] } } }),
    });
    const reply = await rpc.json();
    expect(reply.result.task).toMatchObject({
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [{ parts: [{ text: 'listed' }] }],
      metadata: { token_usage: expect.any(Object) },
    });
    expect(hasCase(reply)).toBe(false);
    const legacy = await (await fetch(`${base}/.well-known/agent-card.json`)).json();
    expect(legacy).toMatchObject({ protocolVersion: '0.3', securitySchemes: { sso_proxy: { type: 'apiKey', in: 'header', name: 'X-Forwarded-User' } } });
  });

  it('names the session of each file in resources/list, and answers in English with mcp.locale en (keys unchanged)', async () => {
    const client = await stack.mcpClient(as('dana@example.com'));
    ollama.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'calc.js', content: '1+1\n' } }] }, { content: 'written' });
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'write calc.js' } })));
    expect(accepted).toMatchObject({ status: 'queued', message: `Task ${accepted.task_id} was queued in session ${accepted.session_id}.` });
    const done = await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id);
    expect(done).toMatchObject({ status: 'completed', message: 'The task has completed.' });
    const [resource] = (await client.listResources()).resources;
    expect(resource).toMatchObject({
      name: 'calc.js',
      title: `calc.js (session ${accepted.session_id.slice(0, 8)})`,
      description: `calc.js in the workspace of session ${accepted.session_id}`,
    });
  });

  it('starts from its bundle alone: Node loads no package but better-sqlite3 and its native addon (on SQLite)', async () => {
    const other = unreachable.service;
    await other.waitForOutput(/listening:/);
    const packages = new Set([...other.stderr.matchAll(/: load "[^"]*node_modules\/((?:@[^/]+\/)?[^/"]+)/g)].map((match) => match[1]));
    // A package outside the bundle would be loaded again, module by module and with no code cache, at every start
    // (a second TypeORM did, through @nestjs/typeorm's createRequire: scripts/bundle.mjs).
    const addon = ['better-sqlite3', 'bindings', 'file-uri-to-path'];
    expect([...packages].filter((name) => !addon.includes(name))).toEqual([]);
    if (unreachable.database.type === 'sqlite') expect([...packages].sort()).toEqual(addon);
  });

  it('is built as ASCII alone, which each start reads as one-byte text (scripts/ascii-regexps.mjs escapes the regular expressions)', () => {
    for (const name of ['main', 'stdio', 'doctor', 'eval', 'eval-tools'])
      expect([name, isAscii(readFileSync(join(import.meta.dirname, '../../dist/bundle', `${name}.cjs`)))]).toEqual([name, true]);
  });

  it('stops on SIGINT as on SIGTERM, and logs an unreachable Ollama without the ".;" typo', async () => {
    const other = unreachable.service;
    await other.waitForOutput(/fix ollama\.host\. Tasks fail until this is fixed\./);
    expect(other.stderr).not.toContain('.;');
    expect(await other.signal('SIGINT')).toBe(0);
  });
});

describe('npm start', () => {
  const root = join(import.meta.dirname, '../..');
  // The test starts the service itself, through npm, on the stack's config.
  const stack = useStack({ service: false });

  it('runs what is built (no build) and stops with npm on SIGTERM, the service included', async () => {
    const { file } = stack.config;
    const port = await freePort();
    const npm = spawn('npm', ['start'], { cwd: root, env: { PATH: process.env.PATH, AGENT_CONFIG: file, AGENT__SERVER__PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await pollUntil(async () => out.includes('listening:') || undefined, 'the listening line', { timeoutMs: 20_000, everyMs: 100 }).catch(() => undefined);
    expect(out).toContain('listening:');
    expect(out).not.toContain('tsc -p');
    const servicePid = Number(/\[Nest\] (\d+)/.exec(out)![1]);
    const exited = new Promise((done) => npm.once('exit', done));
    npm.kill('SIGTERM');
    await exited;
    // npm is gone; the service, its child, must be gone within a second too.
    const alive = () => {
      try {
        process.kill(servicePid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await pollUntil(async () => !alive() || undefined, `service ${servicePid} exiting`, { timeoutMs: 1000, everyMs: 50 }).catch(() => undefined);
    expect(() => process.kill(servicePid, 0)).toThrow();
  });

  it('says clearly when dist/ is missing or older than the sources', () => {
    const copy = mkdtempSync(join(tmpdir(), 'oam-dist-'));
    mkdirSync(join(copy, 'scripts'));
    mkdirSync(join(copy, 'src'));
    copyFileSync(join(root, 'scripts/check-dist.mjs'), join(copy, 'scripts/check-dist.mjs'));
    writeFileSync(join(copy, 'src/main.ts'), 'export {};\n');
    const check = () => spawnSync(process.execPath, [join(copy, 'scripts/check-dist.mjs'), 'main.js'], { encoding: 'utf8' });
    expect(check()).toMatchObject({ status: 1, stderr: expect.stringContaining('main.js is missing: run `npm run build`') });
    mkdirSync(join(copy, 'dist'));
    writeFileSync(join(copy, 'dist/main.js'), '');
    utimesSync(join(copy, 'dist/main.js'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    expect(check()).toMatchObject({ status: 1, stderr: expect.stringContaining('dist/ is older than the sources (src/main.ts changed since the last build)') });
    utimesSync(join(copy, 'dist/main.js'), new Date(), new Date());
    expect(check()).toMatchObject({ status: 0, stderr: '' });
  });
});
