import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, resolve, sep } from 'node:path';
import { runCommand, type SandboxLimits } from '../workspace/command-runner.js';
import { resolveSandbox, type SandboxStatus } from '../workspace/sandbox.js';
import { WorkspaceFiles } from '../workspace/workspace-files.js';
import { WorkspacePaths } from '../workspace/workspace-paths.js';
import type { Check, EvalCase, ReferenceStep } from './case.js';

/** A verifier's command gets this long; a test suite of these cases takes well under a second. */
const CHECK_TIMEOUT_MS = 30_000;
/** Output kept of a verifier's or the bare loop's command. */
const CAPTURE_BYTES = 1024 * 1024;
/**
 * The most of a checked file the eval reads: the cases' files are a few hundred bytes, and what a runaway command
 * wrote (up to workspace.max_file_bytes, 1 GiB by default) is not loaded whole.
 */
const CHECK_FILE_BYTES = 1024 * 1024;

/** Where the eval's own commands run (verifiers, the bare loop's run_command): the service's sandbox, its limits. */
export interface EvalSandbox {
  status: SandboxStatus;
  limits: SandboxLimits;
}

/**
 * The sandbox of the operator's `workspace.sandbox`, resolved as the service resolves it at boot: bubblewrap where
 * it runs, unconfined only when `none` was chosen. Where `auto` finds no bubblewrap the service disables
 * run_command, and the eval refuses to start rather than measure a service that cannot run the cases' tests.
 * `probeEnv`: the environment bubblewrap's probe runs in (the eval's own unless given).
 */
export function evalSandbox(setting: 'auto' | 'bubblewrap' | 'none', limits: SandboxLimits, probeEnv?: NodeJS.ProcessEnv): EvalSandbox {
  const status = resolveSandbox(setting, tmpdir(), probeEnv);
  if (status.mode === 'disabled') {
    throw new Error(
      `${status.detail}\nthe eval runs the agent's commands and its verifiers in that sandbox: install bubblewrap, or set workspace.sandbox: none to run both unconfined`,
    );
  }
  return { status, limits };
}

/** Writes the case's fixture into `dir` (emptied first). */
export function writeFixture(dir: string, item: EvalCase): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [path, content] of Object.entries(item.files)) writeInside(dir, path, content);
}

/** A path of the workspace, refused when it leaves it (a reference step or a model's baseline call naming ../). */
export function inside(dir: string, path: string): string {
  const full = resolve(dir, path);
  if (full !== resolve(dir) && !full.startsWith(resolve(dir) + sep)) throw new Error(`${path}: outside the workspace`);
  return full;
}

function writeInside(dir: string, path: string, content: string): void {
  const full = inside(dir, path);
  mkdirSync(dirname(full), { recursive: true });
  writeFileSync(full, content);
}

/**
 * Runs `command` with the shell in the workspace `cwd`, through the service's command runner: in the sandbox
 * (no network, only `cwd` writable, nothing else of the host's files but the system's) and under its limits.
 * Never rejects: the exit code and the output come back.
 */
export async function shell(command: string, cwd: string, sandbox: EvalSandbox): Promise<{ code: number; output: string }> {
  const options = { workspaceRoot: cwd, sandbox: sandbox.status, timeoutMs: CHECK_TIMEOUT_MS, captureBytes: CAPTURE_BYTES, ...sandbox.limits };
  try {
    const result = await runCommand(command, { ...options, signal: new AbortController().signal });
    return { code: result.exitCode ?? 1, output: `${result.stdout}${result.stderr}` };
  } catch (error) {
    return { code: 1, output: (error as Error).message };
  }
}

/** `text` as one word of a POSIX shell command line. */
const quoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** The agent's file tools (read_file, write_file, edit_file as the service runs them), for the eval's own file work. */
export const FILES = new WorkspaceFiles();

/**
 * The reference steps' effect on the files (write_file, edit_file; reads and commands change nothing in these
 * cases): what `--oracle` applies before it verifies. An edit whose old_text does not occur exactly once throws.
 */
export async function applyReference(dir: string, steps: ReferenceStep[]): Promise<void> {
  const paths = await WorkspacePaths.open(dir);
  for (const step of steps) {
    if (step.tool === 'write_file') await FILES.writeFile(paths, step.args.path, step.args.content);
    if (step.tool === 'edit_file') await FILES.editFile(paths, step.args.path, step.args.old_text, step.args.new_text);
  }
}

/** The checks that failed (empty: the case passed), each said in a few words. */
export async function verify(item: EvalCase, dir: string, answer: string, sandbox: EvalSandbox): Promise<string[]> {
  const failed: string[] = [];
  for (const check of item.checks) {
    const problem = await failure(check, item, dir, answer, sandbox);
    if (problem) failed.push(problem);
  }
  return failed;
}

async function failure(check: Check, item: EvalCase, dir: string, answer: string, sandbox: EvalSandbox): Promise<string | null> {
  if ('answer' in check) return check.answer.test(answer) ? null : `answer does not match ${String(check.answer)}`;
  if ('command' in check) {
    const { code } = await shell(check.command, dir, sandbox);
    return code === 0 ? null : `\`${check.command}\` exited ${code}`;
  }
  if ('script' in check) {
    // On the command line, not in a file of the workspace, so what the agent wrote cannot change the verifier.
    const { code, output } = await shell(`node --input-type=module -e ${quoted(check.script)}`, dir, sandbox);
    return code === 0 ? null : `verifier script exited ${code}: ${output.trim().split('\n')[0] ?? ''}`;
  }
  if ('unchanged' in check) return (await read(dir, check.unchanged)) === item.files[check.unchanged] ? null : `${check.unchanged} was changed`;
  const content = await read(dir, check.file);
  if (check.absent) return content === null ? null : `${check.file} exists`;
  if (content === null) return `${check.file} is missing or not a regular file of at most ${CHECK_FILE_BYTES} bytes`;
  if (check.equals !== undefined && content.trimEnd() !== check.equals) return `${check.file} is not ${JSON.stringify(check.equals)}`;
  if (check.matches && !check.matches.test(content)) return `${check.file} does not match ${String(check.matches)}`;
  return null;
}

/**
 * The workspace's regular file at `path`, read as the agent's file tools read it (workspace/beneath.ts): the agent's
 * commands may have left a link out of the workspace (to a host file, to /dev/zero) or a FIFO there, which is not
 * the file, and must neither be followed nor hang the eval. null when there is no such regular file of at most
 * CHECK_FILE_BYTES.
 */
async function read(dir: string, path: string): Promise<string | null> {
  try {
    return (await FILES.readBytes(await WorkspacePaths.open(dir), path, CHECK_FILE_BYTES)).toString('utf8');
  } catch {
    return null;
  }
}
