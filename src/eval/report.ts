/** How often the service's repairs fired in one run of a case (see repairsOf in service-runner.ts). */
export interface Repairs {
  textToolCalls: number;
  stringArguments: number;
  continuations: number;
  repeatsStopped: number;
  compactions: number;
}

/** No repair fired. */
export const NO_REPAIRS: Repairs = { textToolCalls: 0, stringArguments: 0, continuations: 0, repeatsStopped: 0, compactions: 0 };

/** The repairs of several Tasks or runs, added up key by key. */
export function addRepairs(all: Repairs[]): Repairs {
  const total = { ...NO_REPAIRS };
  for (const repairs of all) for (const key of Object.keys(total) as (keyof Repairs)[]) total[key] += repairs[key];
  return total;
}

/** One run of one case. */
export interface CaseOutcome {
  passed: boolean;
  /** What did not hold, in a few words each (empty when passed). */
  failed: string[];
  modelCalls: number;
  promptTokens: number;
  outputTokens: number;
  wallMs: number;
  repairs: Repairs;
}

/** `service`: through the running service; `baseline`: the bare loop; `oracle`: the reference solution applied. */
export type Harness = 'service' | 'baseline' | 'oracle';

export interface CaseReport {
  id: string;
  kind: string;
  runs: CaseOutcome[];
}

export interface HarnessReport {
  model: string;
  harness: Harness;
  /** Mean over cases of the share of a case's runs that passed. */
  passAt1: number;
  /** Share of cases passed in every run. */
  passAllN: number;
  runs: number;
  modelCalls: number;
  promptTokens: number;
  outputTokens: number;
  repairs: Repairs;
  cases: CaseReport[];
}

export interface EvalReport {
  schema: 'ollama-agent-mcp.eval/1';
  serviceVersion: string;
  startedAt: string;
  finishedAt: string;
  /** false when Ctrl-C stopped it: what finished is kept. */
  complete: boolean;
  settings: { repeat: number; timeoutMs: number; temperature: 0; seed: number; ollamaHost: string | null; cases: string[] };
  results: HarnessReport[];
}

/** The figures of one model under one harness, from its cases' runs (cases with no finished run count as not passed). */
export function summarise(model: string, harness: Harness, cases: CaseReport[]): HarnessReport {
  const runs = cases.flatMap((item) => item.runs);
  const sum = (pick: (run: CaseOutcome) => number) => runs.reduce((total, run) => total + pick(run), 0);
  const share = (values: number[]) => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);
  return {
    model,
    harness,
    passAt1: share(cases.map((item) => (item.runs.length === 0 ? 0 : item.runs.filter((run) => run.passed).length / item.runs.length))),
    passAllN: share(cases.map((item) => (item.runs.length > 0 && item.runs.every((run) => run.passed) ? 1 : 0))),
    runs: runs.length,
    modelCalls: sum((run) => run.modelCalls),
    promptTokens: sum((run) => run.promptTokens),
    outputTokens: sum((run) => run.outputTokens),
    repairs: addRepairs(runs.map((run) => run.repairs)),
    cases,
  };
}

const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

/** The table printed at the end: one row per model and harness. */
export function table(report: EvalReport): string {
  const header = [
    'model',
    'harness',
    'pass@1',
    `pass^${report.settings.repeat}`,
    'runs',
    'calls',
    'prompt tok',
    'output tok',
    'mean wall ms',
    'text calls',
    'string args',
    'continued',
    'repeats',
    'compacted',
  ];
  const rows = report.results.map((result) => {
    const wall = result.runs === 0 ? 0 : Math.round(result.cases.flatMap((item) => item.runs).reduce((total, run) => total + run.wallMs, 0) / result.runs);
    return [
      result.model,
      result.harness,
      percent(result.passAt1),
      percent(result.passAllN),
      String(result.runs),
      String(result.modelCalls),
      String(result.promptTokens),
      String(result.outputTokens),
      String(wall),
      String(result.repairs.textToolCalls),
      String(result.repairs.stringArguments),
      String(result.repairs.continuations),
      String(result.repairs.repeatsStopped),
      String(result.repairs.compactions),
    ];
  });
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column])).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}
