import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { validateConfig } from '../../src/config/agent-config.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';
import { freePort } from '../support/service-process.js';

const ROOT = join(import.meta.dirname, '../..');

/** The shell blocks of the README's "Quick start" section, in order, each as its command lines. */
function quickStartBlocks(readme: string): string[][] {
  const section = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) =>
    match[1]
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .filter((line) => line.trim() !== ''),
  );
}

/**
 * The README's quick start, run line by line from a fresh clone of this repository on the committed defaults.
 * What a test machine must replace, and only that: the clone URL (this repository), `npm ci` (a link to the
 * installed node_modules, as a full install takes minutes on the shared test machine; OAM_QUICKSTART_NPM_CI=1
 * runs it for real), Ollama (a stub `ollama` command and the scripted server, named by AGENT__OLLAMA__HOST),
 * the port (AGENT__SERVER__PORT, 3000 may be taken) and the user's project (a small one in a scratch $HOME).
 */
describe('the README quick start, verbatim on the defaults', () => {
  const ollama = new ScriptedOllama();
  const work = mkdtempSync(join(tmpdir(), 'oam-quickstart-'));
  const clone = join(work, 'ollama-agent-mcp');
  const home = join(work, 'home');
  const bin = join(work, 'bin');
  let port: number;
  let service: ChildProcess | null = null;
  let log = '';
  let env: NodeJS.ProcessEnv;

  const substitute = (line: string) => {
    let out = line.replace('<this repository>', ROOT).replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`);
    if (process.env.OAM_QUICKSTART_NPM_CI !== '1') out = out.replace(/^npm ci && /, `ln -s ${join(ROOT, 'node_modules')} node_modules && `);
    return out;
  };
  // Asynchronous: the scripted Ollama answers from this very process while a line (the curl) waits.
  const run = async (line: string, cwd: string) =>
    (await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', substitute(line)], { cwd, env, encoding: 'utf8', timeout: 300_000 })).stdout;

  beforeAll(async () => {
    ollama.models = ['qwen3:8b'];
    await ollama.start();
    port = await freePort();
    mkdirSync(join(home, 'src/my-project'), { recursive: true });
    writeFileSync(join(home, 'src/my-project/math.test.js'), "import { add } from './math.js';\nif (add(2, 2) !== 4) throw new Error('add is wrong');\n");
    writeFileSync(join(home, 'src/my-project/math.js'), 'export const add = (a, b) => a - b;\n');
    mkdirSync(bin);
    writeFileSync(join(bin, 'ollama'), '#!/bin/sh\n# The test stands in for Ollama: the scripted server already has the model.\necho "pulling $2: success"\n');
    chmodSync(join(bin, 'ollama'), 0o755);
    env = { PATH: `${bin}:${process.env.PATH}`, HOME: home, NO_COLOR: '1', AGENT__OLLAMA__HOST: ollama.url, AGENT__SERVER__PORT: '0' };
  });

  afterAll(async () => {
    if (service && service.exitCode === null) {
      const exited = new Promise((done) => service!.once('exit', done));
      service.kill('SIGTERM');
      await exited;
    }
    await ollama.stop();
  });

  it('starts from a fresh clone with the four lines, and the first request sees the files put in ./workspace', async () => {
    const [start, tryIt] = quickStartBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(start.length).toBeLessThanOrEqual(5);
    expect(start[start.length - 1]).toMatch(/^npm start\b/);
    env.AGENT__SERVER__PORT = String(port);
    // Every line but the last runs to completion; `npm start` keeps running.
    for (const [index, line] of start.slice(0, -1).entries()) await run(line, index === 0 ? work : clone);
    service = spawn('bash', ['-c', substitute(start[start.length - 1])], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
    service.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    service.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const deadline = Date.now() + 30_000;
    while (!log.includes('listening:') && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
    expect(log).toContain(`listening: MCP endpoint http://127.0.0.1:${port}/mcp`);
    expect(log).toContain(`config: ${join(clone, 'agent.yaml')} (agent.yaml in the working directory)`);

    // The scripted model reads the test file, then answers (qwen3:8b's shape: a tool call, then text).
    ollama.enqueue({ toolCalls: [{ name: 'read_file', arguments: { path: 'math.js' } }] }, { content: 'add() subtracts: a - b should be a + b.' });
    let answer = '';
    for (const line of tryIt) answer = await run(line, clone);
    expect(JSON.parse(answer).choices[0].message.content).toBe('add() subtracts: a - b should be a + b.');
    const toolResult = ollama.workChats.at(-1)!.body.messages.find((message) => message.role === 'tool');
    expect(toolResult?.content).toContain('export const add = (a, b) => a - b;');

    // The sign-in URL of the log opens the console's API.
    const url = /admin sign-in: open (\S+)/.exec(log)![1];
    const token = url.split('#token=')[1];
    expect((await fetch(`http://127.0.0.1:${port}/admin/me`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(readFileSync(join(clone, 'data/admin-token'), 'utf8').trim()).toBe(token);
  }, 600_000);

  it('has deployment examples whose configuration the service accepts', () => {
    // Keys and values as the service checks them at boot (its paths exist only inside the container).
    expect(() => validateConfig(parse(readFileSync(join(ROOT, 'deploy/agent.container.yaml'), 'utf8')))).not.toThrow();
  });
});
