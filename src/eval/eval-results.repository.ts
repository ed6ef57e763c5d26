import { randomUUID } from 'node:crypto';
import type { AgentConfig } from '../config/agent-config.js';
import { withMigratedDatabase } from '../database/data-source-options.js';
import { PlainSql } from '../database/plain-sql.js';
import type { EvalReport } from './report.js';

/** What the doctor shows of a model's last run through the service. */
export interface LastEvalResult {
  finishedAt: string;
  serviceVersion: string;
  passAt1: number;
  passAllN: number;
  repeat: number;
  cases: number;
  complete: boolean;
}

/** A model's last figures under one harness, as the console's Models page shows them. */
export interface LatestEvalResult extends LastEvalResult {
  model: string;
  harness: string;
  modelCalls: number;
  promptTokens: number;
  outputTokens: number;
}

/** The eval_results table: written by `npm run eval`, read by the doctor and the console. */
export class EvalResultsRepository {
  constructor(private readonly sql: PlainSql) {}

  /** One row per model and harness of `report` that ran a case (the oracle's, which asked no model, is not kept). */
  async save(report: EvalReport): Promise<void> {
    for (const result of report.results.filter((item) => item.harness !== 'oracle' && item.runs > 0)) {
      const { cases, ...figures } = result;
      await this.sql.run(
        `INSERT INTO eval_results (id, model, harness, service_version, finished_at, pass_at_1, pass_all_n, repeat_count, case_count, complete, figures)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          randomUUID(),
          result.model,
          result.harness,
          report.serviceVersion,
          report.finishedAt,
          result.passAt1,
          result.passAllN,
          report.settings.repeat,
          cases.length,
          this.sql.dialect === 'sqlite' ? Number(report.complete) : report.complete,
          JSON.stringify(figures),
        ],
      );
    }
  }

  /** The last run of `model` through the service, or null when it was never evaluated. */
  async lastFor(model: string): Promise<LastEvalResult | null> {
    const [row] = await this.sql.all<Record<string, unknown>>(
      `SELECT finished_at, service_version, pass_at_1, pass_all_n, repeat_count, case_count, complete FROM eval_results
       WHERE model = ? AND harness = 'service' ORDER BY finished_at DESC LIMIT 1`,
      [model],
    );
    return row ? lastOf(row) : null;
  }

  /** The last result of every model under each harness (service, baseline), by model then harness. */
  async latest(): Promise<LatestEvalResult[]> {
    const rows = await this.sql.all<Record<string, unknown>>(
      `SELECT model, harness, finished_at, service_version, pass_at_1, pass_all_n, repeat_count, case_count, complete, figures FROM eval_results e
       WHERE finished_at = (SELECT MAX(finished_at) FROM eval_results l WHERE l.model = e.model AND l.harness = e.harness)
       ORDER BY model, harness`,
    );
    return rows.map((row) => {
      const figures = JSON.parse(String(row.figures)) as { modelCalls?: number; promptTokens?: number; outputTokens?: number };
      return {
        ...lastOf(row),
        model: String(row.model),
        harness: String(row.harness),
        modelCalls: figures.modelCalls ?? 0,
        promptTokens: figures.promptTokens ?? 0,
        outputTokens: figures.outputTokens ?? 0,
      };
    });
  }
}

/** A row's figures as the doctor shows them (the columns both queries select). */
function lastOf(row: Record<string, unknown>): LastEvalResult {
  return {
    finishedAt: String(row.finished_at),
    serviceVersion: String(row.service_version),
    passAt1: Number(row.pass_at_1),
    passAllN: Number(row.pass_all_n),
    repeat: Number(row.repeat_count),
    cases: Number(row.case_count),
    complete: truthy(row.complete),
  };
}

/** Booleans come back as 0 and 1 from SQLite. */
const truthy = (value: unknown) => value === true || value === 1;

/** Saves `report` in the configured database, migrating it first as the service's start would. */
export function saveEvalReport(database: AgentConfig['database'], report: EvalReport): Promise<void> {
  return withMigratedDatabase(database, (sql) => new EvalResultsRepository(sql).save(report));
}

/**
 * The repository as a Nest provider on the global PlainSql (admin's `GET /admin/eval-results`): a plain class, not
 * @Injectable, so that the eval and the doctor use it without Nest's metadata.
 */
export const evalResultsProvider = { provide: EvalResultsRepository, inject: [PlainSql], useFactory: (sql: PlainSql) => new EvalResultsRepository(sql) };
