import type { AgentConfig } from '../config/agent-config.js';
import { withUnmigratedDatabase } from '../database/data-source-options.js';
import { EvalResultsRepository } from '../eval/eval-results.repository.js';
import type { CheckLine } from '../ollama/ollama-diagnosis.js';

const percent = (value: number) => `${Math.round(value * 100)}%`;

/** The configured model's last `npm run eval` result through the service (issue 41): information, never a failure. */
export async function checkEval(config: AgentConfig): Promise<CheckLine> {
  const model = config.ollama.model;
  // A database the service never migrated has no table yet: nothing was evaluated there.
  const last = await withUnmigratedDatabase(config.database, (sql) => new EvalResultsRepository(sql).lastFor(model)).catch(() => null);
  if (!last) return { name: 'eval', level: 'ok', message: `no result for ${model} yet: \`npm run eval\` measures how well it works here (docs/eval.md)` };
  return {
    name: 'eval',
    level: 'ok',
    message: `${model} on ${last.finishedAt.slice(0, 10)} (service ${last.serviceVersion}): pass@1 ${percent(last.passAt1)}, pass^${last.repeat} ${percent(last.passAllN)} over ${last.cases} cases${last.complete ? '' : ' (stopped early)'}`,
  };
}
