import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CASES, selectCases } from '../../src/eval/cases.js';
import { summarise, table, type CaseOutcome } from '../../src/eval/report.js';
import { repairsOf } from '../../src/eval/service-runner.js';
import { applyReference, inside, verify, writeFixture } from '../../src/eval/workspace.js';

const outcome = (passed: boolean, extra: Partial<CaseOutcome> = {}): CaseOutcome => ({
  passed,
  failed: passed ? [] : ['x'],
  modelCalls: 2,
  promptTokens: 100,
  outputTokens: 10,
  wallMs: 50,
  repairs: { textToolCalls: 0, continuations: 0, repeatsStopped: 0 },
  ...extra,
});

describe('the eval suite (issue 41)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'oam-eval-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has unique ids and covers the kinds of work the issue lists', () => {
    expect(new Set(CASES.map((item) => item.id)).size).toBe(CASES.length);
    const kinds = new Set(CASES.map((item) => item.kind));
    for (const kind of ['fix a failing test', 'find and explain a bug', 'refactor without breaking tests', 'write a file to a specification', 'answer from several files']) {
      expect(kinds).toContain(kind);
    }
    expect(kinds).toContain('a request in Japanese');
    expect(kinds).toContain('a question the agent should ask');
  });

  // A verifier that passes on the untouched fixture with an empty answer proves nothing: each must be able to fail.
  it.each(CASES.map((item) => [item.id, item] as const))('%s: fails untouched, passes with its reference applied', async (_id, item) => {
    const workspace = join(dir, item.id);
    writeFixture(workspace, item);
    expect(await verify(item, workspace, '')).not.toEqual([]);
    applyReference(workspace, item.reference.steps);
    expect(await verify(item, workspace, item.reference.answer)).toEqual([]);
  });

  it('keeps every path inside the workspace', () => {
    expect(() => inside(dir, '../etc/passwd')).toThrow(/outside the workspace/);
    expect(() => inside(dir, '/etc/passwd')).toThrow(/outside the workspace/);
    expect(inside(dir, 'a/b.txt')).toBe(join(dir, 'a/b.txt'));
  });

  it('selects cases by parts of their ids', () => {
    expect(selectCases(['japanese']).map((item) => item.id)).toEqual(['japanese-answer', 'japanese-write', 'japanese-fix']);
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
    const call = (toolCalls: string[], doneReason = 'stop') => ({ kind: 'model_call', outcome: 'ok', detail: { toolCalls, doneReason } });
    const tool = { kind: 'file_op', outcome: 'ok', detail: null };
    const trace = [call([]), tool, call(['read_file']), tool, call([], 'length'), call([])];
    expect(repairsOf(trace, 'done')).toEqual({ textToolCalls: 1, continuations: 1, repeatsStopped: 0 });
    expect(repairsOf([], 'Stopped: the model repeated the same call 3 times with the same result: x').repeatsStopped).toBe(1);
  });
});
