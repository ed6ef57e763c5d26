/** The structured output the planning call must produce (Ollama `format`). */
export const PLAN_SCHEMA = {
  type: 'object',
  properties: {
    mode: { type: 'string', enum: ['direct', 'plan'] },
    subtasks: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          title: { type: 'string' },
          instructions: { type: 'string' },
          depends_on: { type: 'array', items: { type: 'string' } },
        },
        required: ['id', 'title', 'instructions', 'depends_on'],
      },
    },
  },
  required: ['mode', 'subtasks'],
} as const;

export interface Subtask {
  id: string;
  title: string;
  instructions: string;
  dependsOn: string[];
}

export type Plan = { mode: 'direct' } | { mode: 'plan'; subtasks: Subtask[] };

/**
 * Reads the planner's JSON. A plan that is not usable (bad JSON, unknown dependencies, a cycle, too
 * many subtasks) is reported with the reason, so the agent can fall back to the direct path.
 */
export function parsePlan(content: string, maxSubtasks: number): { plan: Plan; problem?: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(content);
  } catch {
    return { plan: { mode: 'direct' }, problem: 'the plan was not valid JSON' };
  }
  const record = (raw ?? {}) as { mode?: unknown; subtasks?: unknown };
  if (record.mode !== 'plan') return { plan: { mode: 'direct' } };
  const items = Array.isArray(record.subtasks) ? record.subtasks : [];
  const subtasks: Subtask[] = [];
  for (const item of items as Record<string, unknown>[]) {
    if (typeof item?.id !== 'string' || typeof item.title !== 'string' || typeof item.instructions !== 'string') {
      return { plan: { mode: 'direct' }, problem: 'a subtask lacks id, title or instructions' };
    }
    const dependsOn = Array.isArray(item.depends_on) ? item.depends_on.filter((dep): dep is string => typeof dep === 'string') : [];
    subtasks.push({ id: item.id.trim(), title: item.title.trim().slice(0, 200), instructions: item.instructions, dependsOn });
  }
  if (subtasks.length < 2) return { plan: { mode: 'direct' }, problem: subtasks.length === 0 ? 'the plan had no subtasks' : undefined };
  if (subtasks.length > maxSubtasks) return { plan: { mode: 'direct' }, problem: `the plan had more than ${maxSubtasks} subtasks` };
  const ids = new Set(subtasks.map((subtask) => subtask.id));
  if (ids.size !== subtasks.length) return { plan: { mode: 'direct' }, problem: 'subtask ids are not unique' };
  const unknown = subtasks.flatMap((subtask) => subtask.dependsOn.filter((dep) => !ids.has(dep)));
  if (unknown.length > 0) return { plan: { mode: 'direct' }, problem: `unknown dependencies: ${unknown.join(', ')}` };
  if (!executionOrder(subtasks)) return { plan: { mode: 'direct' }, problem: 'the dependencies form a cycle' };
  return { plan: { mode: 'plan', subtasks } };
}

/** Dependencies first, otherwise in the planner's order; null when there is a cycle. */
export function executionOrder(subtasks: Subtask[]): Subtask[] | null {
  const done = new Set<string>();
  const order: Subtask[] = [];
  while (order.length < subtasks.length) {
    const next = subtasks.find((subtask) => !done.has(subtask.id) && subtask.dependsOn.every((dep) => done.has(dep)));
    if (!next) return null;
    done.add(next.id);
    order.push(next);
  }
  return order;
}

/** Tokens along the heaviest dependency chain: each subtask weighs the tokens its calls spent. */
export function criticalPathTokens(subtasks: Subtask[], tokensBySubtask: Map<string, number>): number {
  const heaviest = new Map<string, number>();
  for (const subtask of executionOrder(subtasks) ?? []) {
    const upstream = Math.max(0, ...subtask.dependsOn.map((dep) => heaviest.get(dep) ?? 0));
    heaviest.set(subtask.id, upstream + (tokensBySubtask.get(subtask.id) ?? 0));
  }
  return Math.max(0, ...heaviest.values());
}
