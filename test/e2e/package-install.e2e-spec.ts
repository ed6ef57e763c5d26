import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { probe } from '../support/database-probe.js';
import { CLIENT_INFO, fieldsOf, MODERN, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { pollUntil } from '../support/poll.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { freePort } from '../support/service-process.js';

const ROOT = join(import.meta.dirname, '../..');
const exec = promisify(execFile);
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string>; scripts: Record<string, string> };

/**
 * The package as its users get it: `npm pack`, the tarball installed into an empty prefix, and its bin run there
 * from a folder with no agent.yaml, by a user with an empty home (HOME, so XDG's folders are the test's own).
 * What the test substitutes, and only that: the pack skips its prepack build (the suite built dist/ already, and
 * a build in the middle of a parallel run would replace the bundles other files are starting); the install takes
 * the dependencies from npm's cache (--prefer-offline) without install scripts, and better-sqlite3's native addon
 * is the one this checkout built for the same version (its script builds SQLite from source where no prebuilt
 * binary can be downloaded, several minutes on this machine); Ollama is the scripted server (AGENT__OLLAMA__HOST).
 */
describe('the npm package, packed, installed into an empty prefix and run', () => {
  const ollama = new ScriptedOllama();
  const work = mkdtempSync(join(tmpdir(), 'oam-package-'));
  const prefix = join(work, 'prefix');
  const home = join(work, 'home');
  const project = join(work, 'project');
  const bin = join(prefix, 'node_modules/.bin', Object.keys(manifest.bin)[0]);
  const userFile = join(home, '.config/ollama-agent-mcp/agent.yaml');
  const dataFolder = join(home, '.local/share/ollama-agent-mcp');
  let env: Record<string, string>;
  const run = (...args: string[]) => exec(bin, args, { cwd: project, env, encoding: 'utf8', timeout: 120_000 });

  beforeAll(async () => {
    ollama.models = ['qwen3:8b'];
    await ollama.start();
    mkdirSync(prefix);
    mkdirSync(home);
    mkdirSync(project);
    env = { PATH: process.env.PATH!, HOME: home, NO_COLOR: '1', AGENT__OLLAMA__HOST: ollama.url };
    await exec('npm', ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8' });
    const tarball = join(work, `${manifest.name}-${manifest.version}.tgz`);
    await exec('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--prefix', prefix, tarball], {
      cwd: work,
      encoding: 'utf8',
      timeout: 300_000,
    });
    const sqlite = (root: string) => join(root, 'node_modules/better-sqlite3');
    const version = (root: string) => (JSON.parse(readFileSync(join(sqlite(root), 'package.json'), 'utf8')) as { version: string }).version;
    expect(version(prefix)).toBe(version(ROOT));
    mkdirSync(join(sqlite(prefix), 'build/Release'), { recursive: true });
    copyFileSync(join(sqlite(ROOT), 'build/Release/better_sqlite3.node'), join(sqlite(prefix), 'build/Release/better_sqlite3.node'));
  }, 400_000);

  afterAll(() => ollama.stop());

  it('ships the built bundles and what they read, and builds them before packing', () => {
    const installed = join(prefix, 'node_modules', manifest.name);
    for (const file of ['dist/cli.js', 'dist/main.js', 'dist/stdio.js', 'dist/doctor.js', 'dist/init.js', 'dist/bundle/main.cjs', 'public/console.js', 'agent.yaml', 'README.md']) {
      expect(existsSync(join(installed, file))).toBe(true);
    }
    // No sources, tests or code caches of this checkout.
    expect(readdirSync(installed).sort()).toEqual(['README.md', 'agent.yaml', 'config', 'dist', 'package.json', 'public']);
    expect(readdirSync(join(installed, 'dist/bundle')).filter((file) => !/\.(cjs|LEGAL\.txt)$/.test(file))).toEqual([]);
    expect(manifest.scripts.prepack).toBe('npm run build');
  });

  it('runs its four commands: doctor on no file uses the user data folder, init writes where serve then looks', async () => {
    expect((await run('--help')).stdout).toMatch(/^Usage: ollama-agent-mcp \[command\]/);
    expect((await run('--version')).stdout).toBe(`${manifest.version}\n`);
    await expect(run('bogus')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "bogus"') });

    // No agent.yaml anywhere yet: the defaults, with the data in the user's data folder (not in npm's folder).
    const before = await run('doctor').catch((error: { stdout: string }) => error);
    expect(before.stdout).toContain(`database: SQLite ${join(dataFolder, 'data/agent.sqlite')} answers`);
    expect(before.stdout).toMatch(/^ok {4}ollama: /m);

    const init = await run('init');
    expect(init.stdout).toContain(`wrote ${userFile}`);
    expect(readFileSync(userFile, 'utf8')).toContain(`path: ${join(dataFolder, 'data/agent.sqlite')}`);
    await expect(run('init')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('it already exists') });

    const port = await freePort();
    const serve = spawn(bin, [], { cwd: project, env: { ...env, AGENT__SERVER__PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    serve.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
    serve.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const exited = new Promise((done) => serve.once('exit', done));
    try {
      await pollUntil(async () => log.includes('listening:') || undefined, 'serve listening', { timeoutMs: 60_000, everyMs: 100, lastSeen: () => log });
      expect(log).toContain(`config: ${userFile} (no agent.yaml in the working directory (${project}); the one in the user's config folder)`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      serve.kill('SIGTERM');
      await exited;
    }
  }, 300_000);

  it('serves an MCP SDK client over stdio through the installed bin, with the data in the user data folder', async () => {
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: MODERN } } });
    await client.connect(new StdioClientTransport({ command: bin, args: ['stdio'], cwd: project, env, stderr: 'pipe' }));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['agent_run', 'agent_status']);
    ollama.enqueue({ content: 'answered by the installed package' });
    const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request: 'from npx' } })));
    const final = await waitForTerminal(async (taskId) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: taskId } })), accepted.task_id);
    expect(final).toMatchObject({ status: 'completed', result: 'answered by the installed package' });
    await client.close();
    const [row] = await probe<{ status: string }>({ type: 'sqlite', path: join(dataFolder, 'data/agent.sqlite') }, 'SELECT status FROM tasks WHERE id = ?', accepted.task_id);
    expect(row).toEqual({ status: 'completed' });
  }, 120_000);
});
