export interface Subtask {
  id: string;
  title: string;
  instructions: string;
  dependsOn: string[];
}

/**
 * Reads the subtasks of a `plan` tool call (`[{id, title, instructions, depends_on}]`). A plan that is
 * not usable (not a list, a subtask lacking a field, unknown dependencies, a cycle, too few or too many)
 * is refused with the reason, which the model gets as the tool's error and can act on.
 */
export function readPlan(raw: unknown, maxSubtasks: number): { subtasks: Subtask[] } | { problem: string } {
  const items = typeof raw === 'string' ? parseJson(raw) : raw;
  if (!Array.isArray(items)) return { problem: 'subtasks must be a list of {id, title, instructions, depends_on}' };
  const subtasks: Subtask[] = [];
  for (const item of items as Record<string, unknown>[]) {
    if (typeof item?.id !== 'string' || typeof item.title !== 'string' || typeof item.instructions !== 'string' || item.id.trim() === '') {
      return { problem: 'a subtask lacks id, title or instructions' };
    }
    const dependsOn = Array.isArray(item.depends_on) ? item.depends_on.filter((dep): dep is string => typeof dep === 'string').map((dep) => dep.trim()) : [];
    subtasks.push({ id: item.id.trim().slice(0, 64), title: item.title.trim().slice(0, 200), instructions: item.instructions, dependsOn });
  }
  if (subtasks.length < 2) return { problem: 'a plan needs at least 2 subtasks; for one step, just do it' };
  if (subtasks.length > maxSubtasks) return { problem: `a plan may have at most ${maxSubtasks} subtasks` };
  const ids = new Set(subtasks.map((subtask) => subtask.id));
  if (ids.size !== subtasks.length) return { problem: 'subtask ids are not unique' };
  const unknown = subtasks.flatMap((subtask) => subtask.dependsOn.filter((dep) => !ids.has(dep)));
  if (unknown.length > 0) return { problem: `unknown dependencies: ${unknown.join(', ')}` };
  if (!executionOrder(subtasks)) return { problem: 'the dependencies form a cycle' };
  return { subtasks };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
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
export function criticalPathTokens(subtasks: Subtask[], tokensBySubtask: Record<string, number>): number {
  const heaviest = new Map<string, number>();
  for (const subtask of executionOrder(subtasks) ?? []) {
    const upstream = Math.max(0, ...subtask.dependsOn.map((dep) => heaviest.get(dep) ?? 0));
    heaviest.set(subtask.id, upstream + (tokensBySubtask[subtask.id] ?? 0));
  }
  return Math.max(0, ...heaviest.values());
}
