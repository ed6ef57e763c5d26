import { describe, expect, it } from '@jest/globals';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { pollUntil } from '../support/poll.js';

const ROOT = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

interface Step {
  instruction: string;
  args: string;
}

/** The Dockerfile's instructions by stage, continuation lines joined, comments dropped. */
function stages(dockerfile: string): { name: string; steps: Step[] }[] {
  const out: { name: string; steps: Step[] }[] = [];
  const lines = dockerfile.replace(/\\\n\s*/g, ' ').split('\n');
  for (const line of lines.map((text) => text.trim()).filter((text) => text && !text.startsWith('#'))) {
    const [, instruction, args] = /^(\w+)\s+(.*)$/.exec(line)!;
    if (instruction === 'FROM') out.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1] ?? 'final', steps: [] });
    else out.at(-1)!.steps.push({ instruction, args });
  }
  return out;
}

/**
 * No Docker engine runs here, so this replays the image's build as written: each stage in a folder of its own
 * (WORKDIR), its COPY lines from the repository (the build context) or from the earlier stage, and its RUN lines
 * with bash. A file the build needs and the Dockerfile does not copy fails the build, as it would in Docker.
 * What it substitutes, and only that: `npm ci` links the repository's node_modules (a full install takes minutes
 * on the shared machine), `npm prune` runs with --dry-run (it would prune that linked folder), and the final
 * stage's system steps (apt-get, the folders under /var/lib) are not run: they read nothing from the context.
 */
function replay(dockerfile: string, work: string): string {
  const folders = new Map<string, string>();
  for (const stage of stages(dockerfile)) {
    const dir = join(work, stage.name);
    mkdirSync(dir, { recursive: true });
    folders.set(stage.name, dir);
    for (const { instruction, args } of stage.steps) {
      if (instruction === 'WORKDIR') expect(args).toBe('/app');
      else if (instruction === 'COPY') copy(args, dir, folders);
      else if (instruction === 'RUN') run(args, dir, stage.name);
      else expect(['USER', 'VOLUME', 'EXPOSE', 'CMD']).toContain(instruction);
    }
  }
  return folders.get('final')!;
}

function copy(args: string, dir: string, folders: Map<string, string>): void {
  const parts = args.split(/\s+/);
  const from = parts[0].startsWith('--from=') ? folders.get(parts.shift()!.slice('--from='.length))! : ROOT;
  const target = join(dir, parts.pop()!);
  for (const source of parts) {
    const path = join(from, source.replace(/^\/app\//, ''));
    // The build stage's node_modules is the repository's, linked (see replay): linked again.
    if (source.endsWith('node_modules')) symlinkSync(join(ROOT, 'node_modules'), target);
    else cpSync(path, target.endsWith('/') ? join(target, source.split('/').pop()!) : target, { recursive: true, errorOnExist: false });
  }
}

function run(command: string, dir: string, stage: string): void {
  if (stage === 'final') {
    expect(command).toMatch(/^(apt-get update && apt-get install |mkdir -p \/var\/lib\/ollama-agent-mcp\/)/);
    return;
  }
  const replayed = command.replace(/^npm ci$/, `ln -s ${join(ROOT, 'node_modules')} node_modules`).replace('npm prune --omit=dev', 'npm prune --omit=dev --dry-run');
  execFileSync('bash', ['-euo', 'pipefail', '-c', replayed], { cwd: dir, stdio: 'pipe', env: { PATH: process.env.PATH, HOME: dir } });
}

describe('deploy/Dockerfile, its build replayed step by step', () => {
  it('builds the image from the context it names, and the image starts its CMD with the container configuration', async () => {
    const work = mkdtempSync(join(tmpdir(), 'oam-image-'));
    const image = replay(read('deploy/Dockerfile'), work);
    expect(existsSync(join(image, 'dist/main.js'))).toBe(true);
    const cmd = JSON.parse(
      stages(read('deploy/Dockerfile'))
        .at(-1)!
        .steps.find((step) => step.instruction === 'CMD')!.args,
    ) as string[];
    // The container's own configuration, but for what lives outside the image: PostgreSQL, the volume's workspace.
    mkdirSync(join(work, 'workspace'));
    const env = {
      PATH: process.env.PATH,
      NO_COLOR: '1',
      AGENT__DATABASE__TYPE: 'sqlite',
      AGENT__DATABASE__PATH: join(work, 'agent.sqlite'),
      AGENT__WORKSPACE__ROOT: join(work, 'workspace'),
      AGENT__SERVER__HOST: '127.0.0.1',
      AGENT__SERVER__PORT: '0',
    };
    const child = spawn(cmd[0] === 'node' ? process.execPath : cmd[0], cmd.slice(1), { cwd: image, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    try {
      await pollUntil(async () => /listening: MCP endpoint/.test(log) || (child.exitCode !== null ? false : undefined), 'the image CMD listening', {
        timeoutMs: 60_000,
        everyMs: 100,
        lastSeen: () => log,
      });
      expect(log).toContain(`config: ${join(image, 'agent.yaml')} (agent.yaml in the working directory)`);
      expect(log).toMatch(/listening: MCP endpoint/);
    } finally {
      child.kill('SIGTERM');
    }
  }, 300_000);
});

describe('the other deployment examples', () => {
  it('compose.yaml publishes 443 as HTTPS that the proxy terminates with a declared certificate and key', () => {
    const compose = parse(read('deploy/compose.yaml')) as {
      services: Record<string, { command?: string[]; ports?: string[]; secrets?: string[] }>;
      secrets: Record<string, unknown>;
    };
    const proxy = compose.services['sso-proxy'];
    const flag = (name: string) => proxy.command!.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
    const [published, inside] = proxy.ports![0].split(':');
    expect(published).toBe('443');
    expect(flag('https-address')).toBe(`0.0.0.0:${inside}`);
    expect(flag('http-address')).toBeUndefined();
    for (const file of [flag('tls-cert-file'), flag('tls-key-file')]) {
      const secret = /^\/run\/secrets\/(\w+)$/.exec(file ?? '')?.[1];
      expect(proxy.secrets).toContain(secret);
      expect(compose.secrets).toHaveProperty(secret!);
    }
    // Only the proxy is published: the agent is reached through it.
    expect(Object.entries(compose.services).filter(([, service]) => service.ports)).toHaveLength(1);
  });

  it('the systemd unit runs as the user its sysusers.d file makes', () => {
    const user = /^User=(.+)$/m.exec(read('deploy/ollama-agent-mcp.service'))![1];
    const root = mkdtempSync(join(tmpdir(), 'oam-sysusers-'));
    mkdirSync(join(root, 'etc'));
    execFileSync('systemd-sysusers', [`--root=${root}`, '-'], { input: read('deploy/ollama-agent-mcp.sysusers'), stdio: ['pipe', 'pipe', 'pipe'] });
    const passwd = readFileSync(join(root, 'etc/passwd'), 'utf8');
    expect(passwd).toMatch(new RegExp(`^${user}:x:\\d+:\\d+:[^:]*:/var/lib/ollama-agent-mcp:/usr/sbin/nologin$`, 'm'));
    expect(readFileSync(join(root, 'etc/group'), 'utf8')).toMatch(new RegExp(`^${/^Group=(.+)$/m.exec(read('deploy/ollama-agent-mcp.service'))![1]}:`, 'm'));
  });
});
