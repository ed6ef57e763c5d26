import { afterAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CASES, selectCases } from '../../src/eval/cases.js';
import { NO_REPAIRS, summarise, table, type CaseOutcome } from '../../src/eval/report.js';
import { repairsOf } from '../../src/eval/service-runner.js';
import { probeBubblewrap } from '../../src/workspace/sandbox.js';
import { applyReference, evalSandbox, inside, verify, writeFixture } from '../../src/eval/workspace.js';

const outcome = (passed: boolean, extra: Partial<CaseOutcome> = {}): CaseOutcome => ({
  passed,
  failed: passed ? [] : ['x'],
  modelCalls: 2,
  promptTokens: 100,
  outputTokens: 10,
  wallMs: 50,
  repairs: { ...NO_REPAIRS },
  ...extra,
});

/** The verifiers run in bubblewrap as the eval runs them; where it cannot run here, unconfined (`workspace.sandbox: none`). */
const bubblewrap = probeBubblewrap(tmpdir()).ok;
const sandbox = evalSandbox(bubblewrap ? 'bubblewrap' : 'none', { maxFileBytes: 2 ** 30, maxProcesses: 512, maxMemoryBytes: 2 ** 30 });

describe('the eval suite (issue 41)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'oam-eval-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has at least 30 cases with unique ids, covering every kind of work the issue lists', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
    expect(new Set(CASES.map((item) => item.id)).size).toBe(CASES.length);
    expect(new Set(CASES.map((item) => item.kind))).toEqual(
      new Set([
        'a request that needs no tool',
        'fix a failing test',
        'find and explain a bug',
        'refactor without breaking tests',
        'write a file to a specification',
        'answer from several files',
        'use a shell command and read its output',
        'use a tool of a configured MCP server',
        'a split request',
        'a question the agent should ask',
        'an approval that is denied',
        'a request in Japanese',
      ]),
    );
  });

  // A verifier that passes on the untouched fixture with an empty answer proves nothing: each must be able to fail.
  it.each(CASES.map((item) => [item.id, item] as const))('%s: fails untouched, passes with its reference applied', async (_id, item) => {
    const workspace = join(dir, item.id);
    writeFixture(workspace, item);
    expect(await verify(item, workspace, '', sandbox)).not.toEqual([]);
    await applyReference(workspace, item.reference.steps);
    expect(await verify(item, workspace, item.reference.answer, sandbox)).toEqual([]);
  });

  (bubblewrap ? it : it.skip)('runs a verifier in the sandbox: it changes the workspace and nothing of the host beside it', async () => {
    const workspace = join(dir, 'sandboxed', 'workspace');
    const item = { ...CASES[0], files: {}, checks: [{ command: 'echo in > inside.txt && echo out > ../outside.txt && test -f ../outside.txt' }] };
    writeFixture(workspace, item);
    expect(await verify(item, workspace, '', sandbox)).toEqual([]);
    expect(readFileSync(join(workspace, 'inside.txt'), 'utf8')).toBe('in\n');
    // The folder above the workspace is the sandbox's private /tmp: the command saw its file there, the host does not.
    expect(existsSync(join(dir, 'sandboxed', 'outside.txt'))).toBe(false);
  });

  it('refuses to run where auto finds no bubblewrap (the service would disable its commands), and runs unconfined only with none', async () => {
    const limits = { maxFileBytes: 2 ** 30, maxProcesses: 512, maxMemoryBytes: 2 ** 30 };
    const withoutBwrap = { PATH: '/nonexistent' };
    expect(() => evalSandbox('auto', limits, withoutBwrap)).toThrow(/install bubblewrap, or set workspace\.sandbox: none/);
    expect(() => evalSandbox('bubblewrap', limits, withoutBwrap)).toThrow(/workspace\.sandbox is bubblewrap/);
    const unconfined = evalSandbox('none', limits, withoutBwrap);
    expect(unconfined.status.mode).toBe('none');
    const workspace = join(dir, 'unconfined');
    const item = { ...CASES[0], files: {}, checks: [{ command: 'test "$HOME" = "$PWD"' }] };
    writeFixture(workspace, item);
    // The service's command environment either way: HOME is the workspace, nothing of the eval's own.
    expect(await verify(item, workspace, '', unconfined)).toEqual([]);
  });

  // The agent's commands may have swapped a checked file for a link or a FIFO: the eval reads only the workspace's own
  // regular files (as the file tools do), so a link out of it does not pass for the file and a FIFO does not hang it.
  it('an unchanged check reads the regular file itself: a link out of the workspace or a FIFO is a change', async () => {
    const item = { ...CASES[0], files: { 'test.mjs': 'same\n' }, checks: [{ unchanged: 'test.mjs' }] };
    const workspace = join(dir, 'swapped');
    writeFixture(workspace, item);
    writeFileSync(join(dir, 'outside.mjs'), 'same\n');
    rmSync(join(workspace, 'test.mjs'));
    symlinkSync(join(dir, 'outside.mjs'), join(workspace, 'test.mjs'));
    expect(await verify(item, workspace, '', sandbox)).toEqual(['test.mjs was changed']);
    rmSync(join(workspace, 'test.mjs'));
    execFileSync('mkfifo', [join(workspace, 'test.mjs')]);
    expect(await verify(item, workspace, '', sandbox)).toEqual(['test.mjs was changed']);
  });

  // A runaway command may leave a checked file as large as workspace.max_file_bytes (1 GiB by default): not read whole.
  it('a checked file past 1 MiB is not read: it fails its check without being loaded', async () => {
    const item = { ...CASES[0], files: {}, checks: [{ file: 'out.txt', matches: /x/ }] };
    const workspace = join(dir, 'large');
    writeFixture(workspace, item);
    writeFileSync(join(workspace, 'out.txt'), 'x'.repeat(1024 * 1024 + 1));
    expect(await verify(item, workspace, '', sandbox)).toEqual(['out.txt is missing or not a regular file of at most 1048576 bytes']);
  });

  it('keeps every path inside the workspace', () => {
    expect(() => inside(dir, '../etc/passwd')).toThrow(/outside the workspace/);
    expect(() => inside(dir, '/etc/passwd')).toThrow(/outside the workspace/);
    expect(inside(dir, 'a/b.txt')).toBe(join(dir, 'a/b.txt'));
  });

  it('selects cases by parts of their ids', () => {
    expect(selectCases(['japanese']).map((item) => item.id)).toEqual(['japanese-answer', 'japanese-write', 'japanese-fix', 'japanese-explain']);
    expect(selectCases([])).toBe(CASES);
    expect(selectCases(['nothing-like-this'])).toEqual([]);
  });

  it('pass@1 is the mean share of passed runs, pass^N the share of cases passed every time', () => {
    const report = summarise('m', 'service', [
      { id: 'a', kind: 'k', runs: [outcome(true), outcome(true), outcome(true)] },
      { id: 'b', kind: 'k', runs: [outcome(true), outcome(false), outcome(false)] },
      { id: 'c', kind: 'k', runs: [] },
    ]);
    expect(report.passAt1).toBeCloseTo((1 + 1 / 3 + 0) / 3);
    expect(report.passAllN).toBeCloseTo(1 / 3);
    expect(report).toMatchObject({ runs: 6, modelCalls: 12, promptTokens: 600, outputTokens: 60 });
    expect(table({ settings: { repeat: 3 }, results: [report] } as never).split('\n')[1]).toMatch(/^m\s+service\s+44\.4%\s+33\.3%\s+6\s+12\s+600\s+60\s+50\s/);
  });

  it('counts the repairs the trace shows', () => {
    const call = (doneReason = 'stop') => ({ kind: 'model_call', name: 'ollama chat', outcome: 'ok', detail: { toolCalls: [], doneReason } });
    const repair = (name: string) => ({ kind: 'repair', name, outcome: 'ok', detail: null });
    const tool = { kind: 'file_op', name: 'read_file', outcome: 'ok', detail: null };
    const trace = [call(), repair('text_tool_calls'), tool, call(), repair('string_arguments'), tool, repair('compaction'), call('length'), call(), repair('text_tool_calls')];
    expect(repairsOf(trace, 'done')).toEqual({ textToolCalls: 2, stringArguments: 1, continuations: 1, repeatsStopped: 0, compactions: 1 });
    expect(repairsOf([], 'Stopped: the model repeated the same call 3 times with the same result: x').repeatsStopped).toBe(1);
  });
});
