import { afterAll, describe, expect, it } from '@jest/globals';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { validateConfig } from '../../src/config/agent-config.js';
import { sandboxedCommand } from '../../src/mcp-client/connection-pool.js';
import { runCommand, type CommandOptions } from '../../src/workspace/command-runner.js';
import { probeBubblewrap } from '../../src/workspace/sandbox.js';

const base = mkdtempSync(join(tmpdir(), 'oam-sandbox2-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const MiB = 1024 * 1024;
let count = 0;
function workspace(): string {
  const root = join(base, `ws${count++}`);
  mkdirSync(root);
  return root;
}
const run = (root: string, command: string, overrides: Partial<CommandOptions> = {}) =>
  runCommand(command, {
    workspaceRoot: root,
    sandbox: { mode: 'bubblewrap', detail: '' },
    timeoutMs: 20_000,
    captureBytes: 64 * 1024,
    maxFileBytes: 1024 * MiB,
    maxProcesses: 512,
    maxMemoryBytes: 256 * MiB,
    signal: new AbortController().signal,
    ...overrides,
  });

describe('the sandbox, round two (issue 20)', () => {
  it('has bubblewrap', () => {
    const probe = probeBubblewrap(base);
    expect(probe).toMatchObject({ ok: true });
  });

  it('finding 9: git works in the sandbox, also when the service is root and commands run as another uid', async () => {
    const root = workspace();
    const result = await run(root, 'git init -q . && git status --porcelain && echo git-ok');
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('git-ok');
  });

  it('finding 3: ignores the git and npm config a command can write that would run programs', async () => {
    const root = workspace();
    writeFileSync(join(root, 'evil.sh'), '#!/bin/sh\ntouch "$HOME/PWNED_NPM"\nexec /bin/sh "$@"\n', { mode: 0o755 });
    // HOME is the workspace: these are git's and npm's user config files, as the agent could write them.
    writeFileSync(join(root, '.gitconfig'), `[core]\n\tfsmonitor = "touch ${root}/PWNED_FSMONITOR; false"\n\tpager = "touch ${root}/PWNED_PAGER; cat"\n`);
    writeFileSync(join(root, '.npmrc'), `script-shell=${root}/evil.sh\n`);
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'x', version: '1.0.0', scripts: { test: 'echo tests-ran' } }));
    const git = await run(root, 'git init -q . && git status && git -p log -1; echo done');
    expect(git.stdout).toContain('done');
    const npm = await run(root, 'npm test --offline 2>&1');
    expect(npm.stdout).toContain('tests-ran');
    expect(existsSync(join(root, 'PWNED_FSMONITOR'))).toBe(false);
    expect(existsSync(join(root, 'PWNED_PAGER'))).toBe(false);
    expect(existsSync(join(root, 'PWNED_NPM'))).toBe(false);
  });

  it('finding 4: a command cannot take more memory than workspace.max_memory_bytes, in its heap, in /tmp or in /dev', async () => {
    const root = workspace();
    const greedy = await run(
      root,
      'python3 -c "bytearray(1024**3)"; echo heap=$?; head -c 300000000 /dev/zero > /tmp/fill; echo tmp=$?; ' +
        'head -c 300000000 /dev/zero > /dev/shm/fill; echo shm=$?; rm -f /dev/shm/fill; echo x > /dev/fill; echo dev=$?',
    );
    expect(greedy.stdout).toMatch(/heap=1/);
    expect(greedy.stderr).toMatch(/MemoryError/);
    expect(greedy.stdout).toMatch(/tmp=1/);
    // Found beside the finding: bwrap's /dev (and /dev/shm in it) was an unsized tmpfs the command could fill.
    expect(greedy.stdout).toMatch(/shm=1/);
    expect(greedy.stdout).toMatch(/dev=2/);
    const modest = await run(root, 'python3 -c "print(len(bytearray(64*1024**2)))"; head -c 10000000 /dev/zero > /tmp/fill; echo tmp=$?');
    expect(modest.stdout).toBe(`${64 * MiB}\ntmp=0\n`);
  });

  it('issue 37: a command run with the workspace read-only reads it and changes nothing, git diff --output included', async () => {
    const root = workspace();
    writeFileSync(join(root, 'a.txt'), 'one\n');
    const result = await run(root, 'cat a.txt; git diff --no-index --output=out.txt /usr/bin/true /usr/bin/false; echo x > b.txt; rm a.txt; echo tmp > /tmp/t && cat /tmp/t', {
      readOnlyWorkspace: true,
    });
    expect(result.stdout).toBe('one\ntmp\n');
    expect(result.stderr).toMatch(/Read-only file system/);
    expect(existsSync(join(root, 'out.txt'))).toBe(false);
    expect(existsSync(join(root, 'b.txt'))).toBe(false);
    expect(existsSync(join(root, 'a.txt'))).toBe(true);
  });

  it("issue 37, own pass: a sandboxed MCP server is held to the commands' process, memory and file-size limits", () => {
    const root = workspace();
    const config = validateConfig({
      workspace: { max_processes: 40, max_memory_bytes: 300 * MiB, max_file_bytes: 5 * MiB },
      agent: { mcp_servers: { boxed: { command: '/bin/sh', args: ['-c', 'echo "$(ulimit -u 2>/dev/null || ulimit -p) $(ulimit -d) $(ulimit -f)"'], sandbox: true } } },
    });
    const { command, args } = sandboxedCommand(config.agent.mcpServers.boxed, root, config.workspace);
    const probe = spawnSync(command, args, { encoding: 'utf8', timeout: 20_000 });
    expect(probe.stderr).toBe('');
    expect(probe.stdout.trim()).toBe(`40 ${300 * 1024} ${(5 * MiB) / 512}`);
  });
});

describe('issue 37, round three, own pass: a sandboxed MCP server trying to leave its sandbox', () => {
  it('writes only its session workspace; sees no other session, no service file, no network, no host process', async () => {
    const sessions = join(base, 'sessions');
    const root = join(sessions, 'mine');
    mkdirSync(join(sessions, 'other'), { recursive: true });
    mkdirSync(root);
    writeFileSync(join(sessions, 'other', 'theirs.txt'), 'another session');
    const secret = join(base, 'service-secret.txt');
    writeFileSync(secret, 'database password');
    const listener = createServer().listen(0, '127.0.0.1');
    await once(listener, 'listening');
    const port = (listener.address() as AddressInfo).port;
    // Each attempt prints name=yes when it worked.
    const attempts: Record<string, string> = {
      workspace: 'echo x > inside.txt',
      root: 'echo x > /escape',
      etc: 'echo x > /etc/escape',
      usr: 'echo x > /usr/escape',
      // Where the workspace lies below /tmp (as here), its parents are in the sandbox's private /tmp: a write there may work, and stays there.
      parent: 'echo x > ../escape',
      other_session: `cat ${join(sessions, 'other', 'theirs.txt')}`,
      service_file: `cat ${secret}`,
      network: `python3 -c "import socket; socket.create_connection(('127.0.0.1', ${port}), 2)"`,
      host_processes: `test "$(ls /proc | grep -c '^[0-9]')" -gt 5`,
      signal_service: `kill -0 ${process.pid}`,
      hard_link_out: `ln /usr/bin/env env-link`,
    };
    const script = Object.entries(attempts)
      .map(([name, attempt]) => `if ${attempt} >/dev/null 2>&1; then echo ${name}=yes; else echo ${name}=no; fi`)
      .join('\n');
    const config = validateConfig({ agent: { mcp_servers: { boxed: { command: '/bin/sh', args: ['-c', script], sandbox: true } } } });
    const { command, args } = sandboxedCommand(config.agent.mcpServers.boxed, root, config.workspace);
    const probe = await new Promise<string>((resolve) => execFile(command, args, { encoding: 'utf8', timeout: 20_000 }, (_error, stdout) => resolve(stdout)));
    listener.close();
    const { parent: _private, ...outcomes } = Object.fromEntries(
      probe
        .trim()
        .split('\n')
        .map((line) => line.split('=')),
    );
    expect(outcomes).toEqual({
      workspace: 'yes',
      root: 'no',
      etc: 'no',
      usr: 'no',
      other_session: 'no',
      service_file: 'no',
      network: 'no',
      host_processes: 'no',
      signal_service: 'no',
      hard_link_out: 'no',
    });
    expect(existsSync(join(sessions, 'escape'))).toBe(false);
    expect(existsSync(join(root, 'inside.txt'))).toBe(true);
  });
});
