import type { RunBudgets } from '../agent/core/run-limits.js';
import { AgentError } from '../common/agent-error.js';

const KEYS: Record<'snake' | 'camel', Record<keyof RunBudgets, string>> = {
  snake: { maxModelCalls: 'max_model_calls', maxToolCalls: 'max_tool_calls', maxTokens: 'max_tokens', maxWallMs: 'max_wall_ms' },
  camel: { maxModelCalls: 'maxModelCalls', maxToolCalls: 'maxToolCalls', maxTokens: 'maxTokens', maxWallMs: 'maxWallMs' },
};

/**
 * A request's own budget (Chat `agent_budget` in snake_case, A2A metadata `agentBudget` in camelCase):
 * positive integers for some of the four budgets, which can only lower `agent.budgets` (the run takes the
 * smaller). Anything else is refused, naming the field (`at`), and nothing is stored.
 */
export function readBudget(value: unknown, at: string, style: 'snake' | 'camel'): Partial<RunBudgets> | undefined {
  if (value === undefined || value === null) return undefined;
  const names = KEYS[style];
  const allowed = Object.values(names).join(', ');
  if (typeof value !== 'object' || Array.isArray(value)) throw new AgentError('invalid_input', `${at}: must be an object with some of ${allowed}.`);
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !Object.values(names).includes(key));
  if (unknown.length > 0) throw new AgentError('invalid_input', `${at}: unknown field ${JSON.stringify(unknown[0]).slice(0, 80)}; the fields are ${allowed}.`);
  const budget: Partial<RunBudgets> = {};
  for (const [key, name] of Object.entries(names) as [keyof RunBudgets, string][]) {
    const given = fields[name];
    if (given === undefined) continue;
    if (typeof given !== 'number' || !Number.isSafeInteger(given) || given < 1) throw new AgentError('invalid_input', `${at}.${name}: must be a positive integer.`);
    budget[key] = given;
  }
  return budget;
}
