import { Injectable } from '@nestjs/common';

/** What one run may spend (`agent.budgets`, lowered by a Task's own): only runaway work reaches the defaults. */
export interface RunBudgets {
  maxModelCalls: number;
  maxToolCalls: number;
  /** Prompt plus output tokens over the run. */
  maxTokens: number;
  /** Time the run spent running (not waiting for a person between Tasks). */
  maxWallMs: number;
}

/** What the run has spent so far; kept in RunState, so a resumed run keeps counting. */
export interface RunUsage {
  modelCalls: number;
  toolCalls: number;
  tokens: number;
  wallMs: number;
}

/** A limit the run reached: `limit` names it (`max_tool_calls`, `daily_tokens`, …), `detail` says it for a person. */
export interface LimitReached {
  limit: string;
  detail: string;
}

/** Who a run is for and what it may spend: what a provider builds its limit from. */
export interface RunLimitSubject {
  taskId: string;
  sessionId: string;
  owner: string;
  /** The owner's groups when the Task was accepted (a quota's group override is taken from them). */
  ownerGroups: readonly string[];
  budgets: RunBudgets;
}

/** One limit on one run, consulted by the loop at each step boundary (before a model call, before each tool call). */
export interface RunLimit {
  check(usage: Readonly<RunUsage>): LimitReached | null | Promise<LimitReached | null>;
}

/** Makes a run's limit: the budgets here; a per-user daily token quota (issue 39) is one more provider. */
export interface RunLimitProvider {
  readonly id: string;
  forRun(subject: RunLimitSubject): RunLimit | Promise<RunLimit>;
}

/** The run's own budgets, as a limit. */
export const BUDGET_LIMITS: RunLimitProvider = {
  id: 'budgets',
  forRun: ({ budgets }) => ({ check: (usage) => budgetReached(budgets, usage) }),
};

/** The first budget `usage` has reached, or null. */
export function budgetReached(budgets: RunBudgets, usage: Readonly<RunUsage>): LimitReached | null {
  if (usage.modelCalls >= budgets.maxModelCalls) return { limit: 'max_model_calls', detail: `${usage.modelCalls} model calls (budget ${budgets.maxModelCalls})` };
  if (usage.toolCalls >= budgets.maxToolCalls) return { limit: 'max_tool_calls', detail: `${usage.toolCalls} tool calls (budget ${budgets.maxToolCalls})` };
  if (usage.tokens >= budgets.maxTokens) return { limit: 'max_tokens', detail: `${usage.tokens} tokens (budget ${budgets.maxTokens})` };
  if (usage.wallMs >= budgets.maxWallMs) return { limit: 'max_wall_ms', detail: `${Math.round(usage.wallMs / 1000)} s of running (budget ${budgets.maxWallMs} ms)` };
  return null;
}

/**
 * The registry of limit providers. The agent's budgets are registered here; another module adds its
 * limit with `register` in its `onModuleInit` (issue 39's quota), and the loop never changes for it.
 */
@Injectable()
export class RunLimits {
  private readonly providers: RunLimitProvider[] = [BUDGET_LIMITS];

  register(provider: RunLimitProvider): void {
    if (this.providers.some((known) => known.id === provider.id)) throw new Error(`a run limit "${provider.id}" is already registered`);
    this.providers.push(provider);
  }

  forRun(subject: RunLimitSubject): Promise<RunLimit[]> {
    return Promise.all(this.providers.map(async (provider) => provider.forRun(subject)));
  }
}

/** The budgets of a Task: the config's, lowered (never raised) by what the request asked for. */
export function taskBudgets(configured: RunBudgets, requested: Partial<RunBudgets> | null): RunBudgets {
  const lower = (key: keyof RunBudgets) => Math.min(configured[key], requested?.[key] ?? configured[key]);
  return { maxModelCalls: lower('maxModelCalls'), maxToolCalls: lower('maxToolCalls'), maxTokens: lower('maxTokens'), maxWallMs: lower('maxWallMs') };
}
