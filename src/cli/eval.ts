/**
 * `npm run eval`: the fixed suite of eval/cases.ts against an Ollama, through the built service (each case a Task
 * accepted by agent_run over MCP, in a fresh session workspace), optionally through a bare tool loop too
 * (`--baseline`), or with each case's reference solution applied instead of a model (`--oracle`). See docs/eval.md.
 */
import '../startup/node-version.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { INSTALLATION } from '../common/installation.js';
import { SERVER_INFO } from '../common/server-info.js';
import { loadConfig } from '../config/config.loader.js';
import { runBaseline, SEED } from '../eval/baseline.js';
import { saveEvalReport } from '../eval/eval-results.repository.js';
import type { EvalCase } from '../eval/case.js';
import { selectCases } from '../eval/cases.js';
import { NO_REPAIRS, summarise, table, type CaseOutcome, type CaseReport, type EvalReport, type Harness } from '../eval/report.js';
import { ServiceRunner } from '../eval/service-runner.js';
import { applyReference, evalSandbox, verify, writeFixture } from '../eval/workspace.js';

const USAGE = `usage: npm run eval -- [--model NAME]... | [--tier NAME]... [--repeat N] [--cases a,b] [--json FILE]
                       [--timeout-ms MS] [--baseline] [--oracle]`;

/**
 * The command line over the configured Ollama (agent.yaml, AGENT_CONFIG and AGENT__ variables, as the service
 * reads them): its host and headers, and its model unless --model or --tier names others.
 */
function options() {
  const { values } = parseArgs({
    options: {
      model: { type: 'string', multiple: true },
      tier: { type: 'string', multiple: true },
      repeat: { type: 'string', default: '3' },
      cases: { type: 'string', default: '' },
      json: { type: 'string' },
      'timeout-ms': { type: 'string', default: '300000' },
      baseline: { type: 'boolean', default: false },
      oracle: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const repeat = Number(values.repeat);
  const timeoutMs = Number(values['timeout-ms']);
  if (values.help) {
    process.stdout.write(`${USAGE}\n(docs/eval.md says what each option does)\n`);
    process.exit(0);
  }
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > 100 || !Number.isInteger(timeoutMs) || timeoutMs < 1000) {
    throw new Error(`${USAGE}\n--repeat is 1 to 100, --timeout-ms at least 1000`);
  }
  const cases = selectCases(values.cases.split(',').filter(Boolean));
  if (cases.length === 0) throw new Error(`--cases ${values.cases}: no case matches`);
  const { ollama, database, workspace } = loadConfig();
  const tiers = new Map(ollama.models);
  const unknown = (values.tier ?? []).filter((tier) => !tiers.has(tier));
  if (unknown.length > 0) throw new Error(`--tier ${unknown.join(', ')}: not in ollama.models (${[...tiers.keys()].join(', ') || 'none configured'})`);
  const models = [...(values.model ?? []), ...(values.tier ?? []).map((tier) => tiers.get(tier)!)];
  const limits = { maxFileBytes: workspace.maxFileBytes, maxProcesses: workspace.maxProcesses, maxMemoryBytes: workspace.maxMemoryBytes };
  const sandbox = { ...evalSandbox(workspace.sandbox, limits), setting: workspace.sandbox };
  return { ...values, database, ollama: { host: ollama.host, headers: ollama.headers }, models: models.length > 0 ? models : [ollama.model], repeat, timeoutMs, cases, sandbox };
}

/** Ctrl-C: the case under way ends (its service is stopped), what finished is reported and written. */
let interrupted = false;
/** The service of the harness under way: Ctrl-C stops it, which ends the case it runs at once. */
let current: ServiceRunner | null = null;

async function main(): Promise<void> {
  const settings = options();
  const report: EvalReport = {
    schema: 'ollama-agent-mcp.eval/1',
    serviceVersion: SERVER_INFO.version,
    startedAt: new Date().toISOString(),
    finishedAt: '',
    complete: false,
    settings: {
      repeat: settings.oracle ? 1 : settings.repeat,
      timeoutMs: settings.timeoutMs,
      temperature: 0,
      seed: SEED,
      ollamaHost: settings.oracle ? null : settings.ollama.host,
      cases: settings.cases.map((item) => item.id),
    },
    results: [],
  };
  process.on('SIGINT', () => {
    interrupted = true;
    process.stderr.write('\nstopping: the finished cases are kept\n');
    void current?.stop();
  });
  const plan: { model: string; harness: Harness }[] = settings.oracle
    ? [{ model: 'reference', harness: 'oracle' }]
    : settings.models.flatMap((model) => [{ model, harness: 'service' as const }, ...(settings.baseline ? [{ model, harness: 'baseline' as const }] : [])]);
  const total = plan.length * settings.cases.length * (settings.oracle ? 1 : settings.repeat);
  let done = 0;
  for (const { model, harness } of plan) {
    if (interrupted) break;
    const cases: CaseReport[] = settings.cases.map((item) => ({ id: item.id, kind: item.kind, runs: [] }));
    const dir = mkdtempSync(join(tmpdir(), 'oam-eval-'));
    const service =
      harness === 'service' ? new ServiceRunner(dir, { root: INSTALLATION, ollama: settings.ollama, model, timeoutMs: settings.timeoutMs, sandbox: settings.sandbox }) : null;
    try {
      current = service;
      await service?.start();
      for (let round = 0; round < (harness === 'oracle' ? 1 : settings.repeat) && !interrupted; round++) {
        for (const [index, item] of settings.cases.entries()) {
          if (interrupted) break;
          const outcome = await runOne(harness, item, service, dir, model, settings).catch((error: unknown) => {
            if (interrupted) return null;
            throw error;
          });
          if (!outcome || interrupted) break;
          cases[index].runs.push(outcome);
          done++;
          progress(done, total, `${model} ${harness} ${item.id}: ${outcome.passed ? 'pass' : `FAIL (${outcome.failed.join('; ')})`}`);
        }
      }
    } finally {
      current = null;
      await service?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    report.results.push(summarise(model, harness, cases));
  }
  report.complete = !interrupted;
  report.finishedAt = new Date().toISOString();
  process.stdout.write(`\n${table(report)}\n`);
  if (settings.json) writeFileSync(settings.json, `${JSON.stringify(report, null, 2)}\n`);
  // Kept in the configured database for the doctor; a database that cannot take it costs the run nothing.
  if (!settings.oracle) await saveEvalReport(settings.database, report).catch((error: Error) => process.stderr.write(`not kept in the database: ${error.message}\n`));
  if (settings.oracle && report.results.some((result) => result.passAllN < 1)) process.exitCode = 1;
}

async function runOne(harness: Harness, item: EvalCase, service: ServiceRunner | null, dir: string, model: string, settings: ReturnType<typeof options>): Promise<CaseOutcome> {
  if (harness === 'service') return service!.run(item);
  if (harness === 'baseline') return runBaseline(item, settings.ollama, model, settings.timeoutMs, settings.sandbox);
  const started = performance.now();
  const workspace = join(dir, item.id);
  writeFixture(workspace, item);
  await applyReference(workspace, item.reference.steps);
  const failed = await verify(item, workspace, item.reference.answer, settings.sandbox);
  return {
    passed: failed.length === 0,
    failed,
    modelCalls: 0,
    promptTokens: 0,
    outputTokens: 0,
    wallMs: Math.round(performance.now() - started),
    repairs: { ...NO_REPAIRS },
  };
}

/** One line per finished run: a bar, the count, and the case's result. */
function progress(done: number, total: number, line: string): void {
  const width = 20;
  const filled = Math.round((done / total) * width);
  process.stdout.write(`[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ${line}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 2;
});
