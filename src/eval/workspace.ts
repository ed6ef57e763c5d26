import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import type { Check, EvalCase, ReferenceStep } from './case.js';

/** A verifier's command gets this long; a test suite of these cases takes well under a second. */
const CHECK_TIMEOUT_MS = 30_000;

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

/** Runs `command` with the shell in `cwd`; never rejects: the exit code and the output come back. */
export function shell(command: string, cwd: string, timeoutMs = CHECK_TIMEOUT_MS): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile('/bin/sh', ['-c', command], { cwd, timeout: timeoutMs, maxBuffer: 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, output: `${stdout}${stderr}` });
    });
  });
}

/**
 * The reference steps' effect on the files (write_file, edit_file; reads and commands change nothing in these
 * cases): what `--oracle` applies before it verifies.
 */
export function applyReference(dir: string, steps: ReferenceStep[]): void {
  for (const step of steps) {
    if (step.tool === 'write_file') writeInside(dir, step.args.path, step.args.content);
    if (step.tool === 'edit_file') {
      const file = inside(dir, step.args.path);
      const text = readFileSync(file, 'utf8');
      if (text.split(step.args.old_text).length !== 2) throw new Error(`reference edit of ${step.args.path}: old_text does not occur exactly once`);
      writeFileSync(
        file,
        text.replace(step.args.old_text, () => step.args.new_text),
      );
    }
  }
}

/** The checks that failed (empty: the case passed), each said in a few words. */
export async function verify(item: EvalCase, dir: string, answer: string): Promise<string[]> {
  const failed: string[] = [];
  for (const check of item.checks) {
    const problem = await failure(check, item, dir, answer);
    if (problem) failed.push(problem);
  }
  return failed;
}

async function failure(check: Check, item: EvalCase, dir: string, answer: string): Promise<string | null> {
  if ('answer' in check) return check.answer.test(answer) ? null : `answer does not match ${String(check.answer)}`;
  if ('command' in check) {
    const { code } = await shell(check.command, dir);
    return code === 0 ? null : `\`${check.command}\` exited ${code}`;
  }
  if ('script' in check) {
    // Outside the workspace, so what the agent wrote cannot change the verifier.
    const scriptDir = mkdtempSync(join(tmpdir(), 'oam-eval-check-'));
    try {
      writeFileSync(join(scriptDir, 'check.mjs'), check.script);
      const { code, output } = await shell(`node ${JSON.stringify(join(scriptDir, 'check.mjs'))}`, dir);
      return code === 0 ? null : `verifier script exited ${code}: ${output.trim().split('\n')[0] ?? ''}`;
    } finally {
      rmSync(scriptDir, { recursive: true, force: true });
    }
  }
  if ('unchanged' in check) return read(dir, check.unchanged) === item.files[check.unchanged] ? null : `${check.unchanged} was changed`;
  const content = read(dir, check.file);
  if (check.absent) return content === null ? null : `${check.file} exists`;
  if (content === null) return `${check.file} is missing`;
  if (check.equals !== undefined && content.trimEnd() !== check.equals) return `${check.file} is not ${JSON.stringify(check.equals)}`;
  if (check.matches && !check.matches.test(content)) return `${check.file} does not match ${String(check.matches)}`;
  return null;
}

function read(dir: string, path: string): string | null {
  try {
    return readFileSync(inside(dir, path), 'utf8');
  } catch {
    return null;
  }
}
