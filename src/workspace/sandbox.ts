import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export type SandboxMode = 'bubblewrap' | 'none' | 'disabled';

export interface SandboxStatus {
  mode: SandboxMode;
  /** Why commands are disabled, or which isolation they run under. */
  detail: string;
}

/**
 * The user commands run as when the service runs as root. Root (uid 0 outside, which is also what a
 * user namespace created by root maps to) is exempt from RLIMIT_NPROC, so a fork bomb would not be
 * contained; a uid of its own is not (and shares its process count with nothing else on the host).
 */
export const SANDBOX_UID = 59999;

/** Whether the service runs as root (the default in many containers). */
const serviceIsRoot = () => process.getuid?.() === 0;

/**
 * As root: no user namespace (it could only map uid 0), the command keeps only what it needs to
 * switch to SANDBOX_UID and, as that user, still read and write every workspace file, whoever made it
 * (CAP_DAC_OVERRIDE, CAP_FOWNER). Mounts bound read-only stay read-only whatever the capabilities.
 */
const AS_ROOT = [
  '--unshare-ipc',
  '--unshare-pid',
  '--unshare-net',
  '--unshare-uts',
  '--unshare-cgroup-try',
  '--cap-drop',
  'ALL',
  ...['CAP_SETUID', 'CAP_SETGID', 'CAP_SETPCAP', 'CAP_DAC_OVERRIDE', 'CAP_FOWNER'].flatMap((cap) => ['--cap-add', cap]),
];
const KEPT_CAPS = '-all,+dac_override,+fowner';
const DROP_TO_SANDBOX_USER = [
  '/usr/bin/setpriv',
  `--reuid=${SANDBOX_UID}`,
  `--regid=${SANDBOX_UID}`,
  '--clear-groups',
  `--inh-caps=${KEPT_CAPS}`,
  `--ambient-caps=${KEPT_CAPS}`,
  `--bounding-set=${KEPT_CAPS}`,
  '--',
];

/** The shell that runs `script` inside the sandbox: as SANDBOX_UID when the service is root. */
export const sandboxShell = (script: string) => [...(serviceIsRoot() ? DROP_TO_SANDBOX_USER : []), '/bin/sh', '-c', script];

/** The /tmp of the boot probe (commands get workspace.max_memory_bytes). */
const DEFAULT_TMP_BYTES = 64 * 1024 * 1024;

/**
 * Namespaces and mounts for one command: no network, read-only system, writable workspace (unless
 * `workspaceWritable` is false: a command that runs without a person's approval), private /tmp;
 * `readOnly` folders are bound read-only too (a sandboxed MCP server's own code).
 */
export function bubblewrapArgs(workspaceRoot: string, tmpBytes = DEFAULT_TMP_BYTES, readOnly: readonly string[] = [], workspaceWritable = true): string[] {
  const args = [
    ...(serviceIsRoot() ? AS_ROOT : ['--unshare-all', '--cap-drop', 'ALL']),
    '--die-with-parent',
    '--new-session',
    '--clearenv',
    '--ro-bind',
    '/usr',
    '/usr',
    '--symlink',
    'usr/bin',
    '/bin',
    '--symlink',
    'usr/sbin',
    '/sbin',
    '--symlink',
    'usr/lib',
    '/lib',
    '--symlink',
    'usr/lib64',
    '/lib64',
    // Made by bwrap as root with mode 0700 otherwise: a command as SANDBOX_UID could read nothing below it.
    '--perms',
    '0755',
    '--dir',
    '/etc',
    '--ro-bind-try',
    '/etc/alternatives',
    '/etc/alternatives',
    '--ro-bind-try',
    '/etc/ld.so.cache',
    '/etc/ld.so.cache',
    '--ro-bind-try',
    '/etc/ssl',
    '/etc/ssl',
    '--ro-bind-try',
    '/etc/localtime',
    '/etc/localtime',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // bwrap's /dev is an unsized tmpfs (half the host's memory) the command could fill: read-only, with a
    // sized /dev/shm (POSIX shared memory) of its own. Device nodes stay usable on a read-only mount.
    '--size',
    String(tmpBytes),
    '--tmpfs',
    '/dev/shm',
    '--remount-ro',
    '/dev',
    // Sized: an unsized tmpfs may take half the host's memory, outside any per-process limit.
    '--size',
    String(tmpBytes),
    '--tmpfs',
    '/tmp',
    // The directories above the workspace, which bwrap would make 0700 root: git refuses a work tree it
    // cannot reach with access(2), which ignores the capabilities of a command running as SANDBOX_UID.
    ...ancestors(workspaceRoot).flatMap((dir) => ['--perms', '0755', '--dir', dir]),
    workspaceWritable ? '--bind' : '--ro-bind',
    workspaceRoot,
    workspaceRoot,
  ];
  // Codex-style protected path: the repository metadata (hooks, config) stays read-only.
  if (existsSync(join(workspaceRoot, '.git'))) args.push('--ro-bind', join(workspaceRoot, '.git'), join(workspaceRoot, '.git'));
  for (const folder of readOnly) args.push('--ro-bind', folder, folder);
  // The sandbox's own root (and the /etc it holds) is read-only too; only the workspace and /tmp take writes.
  return [...args, '--remount-ro', '/', '--chdir', workspaceRoot];
}

/** `/a/b/c` -> `/a`, `/a/b`: the directories above a path, outermost first. */
function ancestors(path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  return parts.slice(0, -1).map((_, index) => `/${parts.slice(0, index + 1).join('/')}`);
}

/**
 * Git settings given on the "command line" (GIT_CONFIG_COUNT), which outrank every config file: the
 * agent can write the workspace (and HOME is the workspace), so no file it wrote may make git run a
 * program (hooks, fsmonitor, a pager). The workspace is a safe directory whoever owns its files (the
 * service writes as itself, a root service's commands run as SANDBOX_UID).
 */
const gitOverrides = (workspaceRoot: string): [string, string][] => [
  ['safe.directory', workspaceRoot],
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.editor', 'false'],
  ['sequence.editor', 'false'],
  ['core.sshCommand', 'false'],
];

/**
 * The only variables a command sees: nothing of the service's environment (tokens, database URLs). Git
 * reads no system or user config file and npm no user config (both would be the agent's: HOME is the
 * workspace); npm's script shell is fixed.
 */
export function commandEnvironment(workspaceRoot: string): Record<string, string> {
  const git = gitOverrides(workspaceRoot);
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: workspaceRoot,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    TZ: 'UTC',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_COUNT: String(git.length),
    ...Object.fromEntries(
      git.flatMap(([key, value], index) => [
        [`GIT_CONFIG_KEY_${index}`, key],
        [`GIT_CONFIG_VALUE_${index}`, value],
      ]),
    ),
    NPM_CONFIG_USERCONFIG: '/dev/null',
    NPM_CONFIG_SCRIPT_SHELL: '/bin/sh',
  };
}

/** Runs bubblewrap once with the real argument set; `auto` uses it only if this works here. */
export function probeBubblewrap(workspaceRoot: string, env: NodeJS.ProcessEnv = process.env): { ok: boolean; detail: string } {
  const probe = spawnSync('bwrap', [...bubblewrapArgs(workspaceRoot), ...sandboxShell('exit 0')], { timeout: 10_000, encoding: 'utf8', env });
  if (probe.error) return { ok: false, detail: `bubblewrap cannot run: ${probe.error.message}` };
  if (probe.status !== 0) return { ok: false, detail: `bubblewrap failed: ${(probe.stderr || `exit ${probe.status}`).trim()}` };
  return { ok: true, detail: `bubblewrap: no network, read-only system, writable workspace, private /tmp and PIDs${serviceIsRoot() ? `, commands as uid ${SANDBOX_UID}` : ''}` };
}

export function resolveSandbox(setting: 'auto' | 'bubblewrap' | 'none', workspaceRoot: string, env?: NodeJS.ProcessEnv): SandboxStatus {
  if (setting === 'none') return { mode: 'none', detail: 'no sandbox (workspace.sandbox: none was chosen explicitly)' };
  const probe = probeBubblewrap(workspaceRoot, env);
  if (probe.ok) return { mode: 'bubblewrap', detail: probe.detail };
  if (setting === 'bubblewrap') throw new Error(`workspace.sandbox is bubblewrap, but ${probe.detail}`);
  return { mode: 'disabled', detail: `run_command is disabled (sandbox_unavailable): ${probe.detail}` };
}
