import { describe, expect, it } from '@jest/globals';
import { validateConfig } from '../../src/config/agent-config.js';
import { withUnmigratedDatabase } from '../../src/database/data-source-options.js';
import { EvalResultsRepository, saveEvalReport } from '../../src/eval/eval-results.repository.js';
import { NO_REPAIRS, summarise, type EvalReport } from '../../src/eval/report.js';
import { freshDatabase, type DatabaseKind } from '../support/databases.js';

const run = (passed: boolean) => ({
  passed,
  failed: [],
  modelCalls: 3,
  promptTokens: 90,
  outputTokens: 9,
  wallMs: 10,
  repairs: { ...NO_REPAIRS, textToolCalls: 1 },
});

function report(finishedAt: string, complete: boolean, model = 'qwen3:8b'): EvalReport {
  const cases = [
    { id: 'a', kind: 'k', runs: [run(true), run(true)] },
    { id: 'b', kind: 'k', runs: [run(true), run(false)] },
  ];
  return {
    schema: 'ollama-agent-mcp.eval/1',
    serviceVersion: '0.1.0',
    startedAt: finishedAt,
    finishedAt,
    complete,
    settings: { repeat: 2, timeoutMs: 1000, temperature: 0, seed: 42, ollamaHost: 'http://127.0.0.1:11434', cases: ['a', 'b'] },
    results: [summarise(model, 'service', cases), summarise(model, 'baseline', [{ id: 'a', kind: 'k', runs: [run(false)] }])],
  };
}

describe.each<DatabaseKind>(['sqlite', 'postgres'])('eval results in the database (%s)', (kind) => {
  it('keeps each run and gives the doctor the last one through the service, per model', async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await saveEvalReport(database, report('2026-12-05T10:00:00.000Z', true));
    await saveEvalReport(database, report('2026-12-06T10:00:00.000Z', false));
    const [last, none] = await withUnmigratedDatabase(database, async (sql) => {
      const results = new EvalResultsRepository(sql);
      return [await results.lastFor('qwen3:8b'), await results.lastFor('qwen3:14b')];
    });
    expect(last).toEqual({ finishedAt: '2026-12-06T10:00:00.000Z', serviceVersion: '0.1.0', passAt1: 0.75, passAllN: 0.5, repeat: 2, cases: 2, complete: false });
    expect(none).toBeNull();
  });

  it("gives the console every model's last result per harness, with its calls and tokens", async () => {
    const { database } = validateConfig({ database: await freshDatabase(kind) });
    await saveEvalReport(database, report('2026-12-05T10:00:00.000Z', true));
    await saveEvalReport(database, report('2026-12-06T10:00:00.000Z', false));
    await saveEvalReport(database, report('2026-12-04T10:00:00.000Z', true, 'gpt-oss:20b'));
    const latest = await withUnmigratedDatabase(database, (sql) => new EvalResultsRepository(sql).latest());
    const figures = { serviceVersion: '0.1.0', repeat: 2 };
    expect(latest).toEqual([
      {
        model: 'gpt-oss:20b',
        harness: 'baseline',
        finishedAt: '2026-12-04T10:00:00.000Z',
        ...figures,
        passAt1: 0,
        passAllN: 0,
        cases: 1,
        complete: true,
        modelCalls: 3,
        promptTokens: 90,
        outputTokens: 9,
      },
      {
        model: 'gpt-oss:20b',
        harness: 'service',
        finishedAt: '2026-12-04T10:00:00.000Z',
        ...figures,
        passAt1: 0.75,
        passAllN: 0.5,
        cases: 2,
        complete: true,
        modelCalls: 12,
        promptTokens: 360,
        outputTokens: 36,
      },
      {
        model: 'qwen3:8b',
        harness: 'baseline',
        finishedAt: '2026-12-06T10:00:00.000Z',
        ...figures,
        passAt1: 0,
        passAllN: 0,
        cases: 1,
        complete: false,
        modelCalls: 3,
        promptTokens: 90,
        outputTokens: 9,
      },
      {
        model: 'qwen3:8b',
        harness: 'service',
        finishedAt: '2026-12-06T10:00:00.000Z',
        ...figures,
        passAt1: 0.75,
        passAllN: 0.5,
        cases: 2,
        complete: false,
        modelCalls: 12,
        promptTokens: 360,
        outputTokens: 36,
      },
    ]);
  });
});
