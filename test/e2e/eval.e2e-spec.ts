import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { CASES } from '../../src/eval/cases.js';
import type { EvalReport, HarnessReport } from '../../src/eval/report.js';
import { EvalModel } from '../support/eval-models.js';
import { ScriptedOllama } from '../support/scripted-ollama.js';

const run = promisify(execFile);
/** A whole run of the suite (31 cases, each through the service and its verifier in the sandbox) takes a while on a busy machine. */
const RUN_BOUND_MS = 300_000;
const NO_TOOL = CASES.filter((item) => !item.needsTools).map((item) => item.id);
const ALL = CASES.map((item) => item.id);

/**
 * `npm run eval` end to end (the built dist/eval.js, which starts the built service and drives it over MCP) against
 * the scripted Ollama, whose scripted models have a known quality (test/support/eval-models.ts). It brings its own
 * SQLite database, so the file runs in the sqlite project only.
 */
describe('npm run eval against scripted models of known quality', () => {
  const ollama = new ScriptedOllama();
  let dir: string;
  let configFile: string;

  beforeAll(async () => {
    await ollama.start();
    dir = mkdtempSync(join(tmpdir(), 'oam-eval-e2e-'));
    mkdirSync(join(dir, 'workspace'));
    configFile = join(dir, 'agent.yaml');
    // The operator's configuration: the eval takes its Ollama and model from it.
    writeFileSync(configFile, JSON.stringify({ ollama: { host: ollama.url, model: 'test-model' }, workspace: { root: join(dir, 'workspace') } }));
  });
  afterAll(async () => {
    await ollama.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** dist/eval.js (or `program`, such as the bin) with `args`; its exit code, output and JSON report. */
  async function evaluate(args: string[], program = ['dist/eval.js']): Promise<{ code: number; stdout: string; report: EvalReport }> {
    const json = join(dir, `report-${Date.now()}.json`);
    const env = { PATH: process.env.PATH, AGENT_CONFIG: configFile };
    const ended = await run(process.execPath, [...program, '--json', json, ...args], { env, timeout: RUN_BOUND_MS - 10_000 }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code?: unknown; stdout: string }) => {
        if (typeof error.code !== 'number') throw new Error(`eval did not run: ${String(error.code)}`);
        return { code: error.code, stdout: error.stdout };
      },
    );
    return { ...ended, report: JSON.parse(readFileSync(json, 'utf8')) as EvalReport };
  }

  const caseChat = (chat: (typeof ollama.chats)[number], id: string) =>
    chat.body.messages.some((message) => message.content.includes(CASES.find((item) => item.id === id)!.request));
  const passedIds = (result: HarnessReport) => result.cases.filter((item) => item.runs.every((outcome) => outcome.passed)).map((item) => item.id);
  const byHarness = (report: EvalReport, harness: string) => report.results.find((result) => result.harness === harness)!;

  it(
    '--oracle applies every reference solution and every verifier passes',
    async () => {
      const { code, stdout, report } = await evaluate(['--oracle']);
      expect(code).toBe(0);
      expect(report.complete).toBe(true);
      expect(report.results).toHaveLength(1);
      expect(report.results[0]).toMatchObject({ harness: 'oracle', passAt1: 1, passAllN: 1 });
      expect(passedIds(report.results[0])).toEqual(ALL);
      expect(stdout).toContain(`${ALL.length}/${ALL.length} reference oracle ${ALL.at(-1)}: pass`);
    },
    RUN_BOUND_MS,
  );

  it(
    'a model that follows the reference passes everything, through the service and the bare loop, and the figures are its counts',
    async () => {
      const model = new EvalModel('follower');
      ollama.respond = model.respond;
      const { code, report } = await evaluate(['--repeat', '1', '--baseline']);
      expect(code).toBe(0);
      for (const harness of ['service', 'baseline'] as const) {
        const result = byHarness(report, harness);
        expect(passedIds(result)).toEqual(ALL);
        expect({ modelCalls: result.modelCalls, promptTokens: result.promptTokens, outputTokens: result.outputTokens }).toEqual(model.totals(harness));
      }
      expect(byHarness(report, 'service').repairs).toEqual({ textToolCalls: 0, stringArguments: 0, continuations: 0, repeatsStopped: 0, compactions: 0 });
      // Temperature 0 and seed 42 on both paths: the service's runs through its ollama.seed.
      const options = ollama.chats.filter((chat) => chat.body.messages.some((message) => message.content.includes(CASES[0].request))).map((chat) => chat.body.options);
      expect(options.length).toBe(2);
      for (const sent of options) expect(sent).toMatchObject({ temperature: 0, seed: 42 });
      // Through the service, the MCP case's answer came from the eval's MCP server, and the denied deploy never ran:
      // the model was told it was refused, by the service after the eval's `deny`, by the bare loop itself.
      const toolResults = (id: string, asker: 'service' | 'baseline') => {
        const chat = ollama.chats.filter((entry) => caseChat(entry, id) && (entry.body.messages[0]?.role === 'system') === (asker === 'service')).at(-1)!;
        return chat.body.messages.filter((message) => message.role === 'tool').map((message) => message.content);
      };
      for (const asker of ['service', 'baseline'] as const) {
        expect(toolResults('mcp-tool', asker).join('\n')).toContain('YT-88412-0457');
        const deploy = toolResults('approval-denied', asker).join('\n');
        expect(deploy).toMatch(/denied|refused|not approved/i);
        expect(deploy).not.toContain('deployed 1.4.2');
      }
      // Kept in the configured database: the doctor names the configured model's last result through the service.
      const { stdout } = await run(process.execPath, ['dist/doctor.js'], { env: { PATH: process.env.PATH, AGENT_CONFIG: configFile }, timeout: 60_000 }).catch(
        (error: { stdout: string }) => error,
      );
      expect(stdout.split('\n')).toContain(
        `ok    eval: test-model on ${report.finishedAt.slice(0, 10)} (service ${report.serviceVersion}): pass@1 100%, pass^1 100% over ${ALL.length} cases`,
      );
    },
    RUN_BOUND_MS,
  );

  it(
    'a model that only chats passes only the cases that need no tool',
    async () => {
      ollama.respond = new EvalModel('chatter').respond;
      const { report } = await evaluate(['--repeat', '2', '--baseline']);
      for (const harness of ['service', 'baseline']) {
        const result = byHarness(report, harness);
        expect(passedIds(result)).toEqual(NO_TOOL);
        expect(result.passAt1).toBeCloseTo(NO_TOOL.length / ALL.length);
        expect(result.cases.every((item) => item.runs.length === 2)).toBe(true);
      }
    },
    RUN_BOUND_MS,
  );

  it(
    'a model that writes its tool calls as text passes through the service (each call recovered) and fails through the bare loop',
    async () => {
      ollama.respond = new EvalModel('texter').respond;
      const { report } = await evaluate(['--repeat', '1', '--baseline']);
      const service = byHarness(report, 'service');
      expect(passedIds(service)).toEqual(ALL);
      // One recovery per reference step (the texter writes one call per reply), and no other repair.
      const steps = CASES.reduce((sum, item) => sum + item.reference.steps.length, 0);
      expect(service.repairs).toEqual({ textToolCalls: steps, stringArguments: 0, continuations: 0, repeatsStopped: 0, compactions: 0 });
      const baseline = byHarness(report, 'baseline');
      expect(passedIds(baseline)).toEqual(NO_TOOL);
      expect(baseline.passAt1).toBeCloseTo(NO_TOOL.length / ALL.length);
    },
    RUN_BOUND_MS,
  );

  it(
    'runs as `ollama-agent-mcp eval` through the bin as npm links it (node_modules/.bin, a symbolic link to dist/cli.js)',
    async () => {
      ollama.respond = new EvalModel('follower').respond;
      const bin = join(dir, 'node_modules', '.bin');
      mkdirSync(bin, { recursive: true });
      symlinkSync(resolve('dist/cli.js'), join(bin, 'ollama-agent-mcp'));
      const { code, report } = await evaluate(['--repeat', '1', '--cases', 'no-tool-units'], [join(bin, 'ollama-agent-mcp'), 'eval']);
      expect(code).toBe(0);
      expect(byHarness(report, 'service').cases).toMatchObject([{ id: 'no-tool-units', runs: [{ passed: true }] }]);
    },
    RUN_BOUND_MS,
  );

  it(
    'a case whose model never answers fails within its bound, and the other cases still run',
    async () => {
      ollama.respond = new EvalModel('follower', ['no-tool']).respond;
      const { report } = await evaluate(['--repeat', '1', '--cases', 'no-tool,shell-output', '--timeout-ms', '3000']);
      // Without --baseline: the service's row only.
      expect(report.results.map((result) => result.harness)).toEqual(['service']);
      const [hung, after] = byHarness(report, 'service').cases;
      expect(hung).toMatchObject({ id: 'no-tool', runs: [{ passed: false, failed: ['no end within 3000 ms'] }] });
      expect(after).toMatchObject({ id: 'shell-output', runs: [{ passed: true }] });
    },
    RUN_BOUND_MS,
  );
});
