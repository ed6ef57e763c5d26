export interface Subtask {
  id: string;
  title: string;
  instructions: string;
  dependsOn: string[];
}

/**
 * Reads the subtasks of a `plan` tool call (`[{id, title, instructions, depends_on}]`). A list of strings,
 * or one numbered text (`1. … 2. …`), is read as sequential subtasks (`s1`, `s2`, …, each after the one
 * before): models write plans that way often enough that refusing them left the Task at `0/1`. A plan
 * that is still not usable (a subtask lacking a field, unknown dependencies, a cycle, too few or too many)
 * is refused with the reason, which the model gets as the tool's error and can act on.
 */
export function readPlan(raw: unknown, maxSubtasks: number): { subtasks: Subtask[] } | { problem: string } {
  const parsed = typeof raw === 'string' ? parseJson(raw) : raw;
  const items = parsed === undefined && typeof raw === 'string' ? numberedSteps(raw) : typeof parsed === 'string' ? numberedSteps(parsed) : parsed;
  if (!Array.isArray(items)) return { problem: 'subtasks must be a list of {id, title, instructions, depends_on}' };
  const subtasks: Subtask[] = [];
  for (const [index, item] of (items as unknown[]).entries()) {
    if (typeof item === 'string') {
      if (item.trim() === '') return { problem: 'a subtask is empty' };
      subtasks.push(sequentialStep(item.trim(), index));
      continue;
    }
    const fields = item as Record<string, unknown> | null;
    if (typeof fields?.id !== 'string' || typeof fields.title !== 'string' || typeof fields.instructions !== 'string' || fields.id.trim() === '') {
      return { problem: 'a subtask lacks id, title or instructions' };
    }
    const dependsOn = Array.isArray(fields.depends_on) ? fields.depends_on.filter((dep): dep is string => typeof dep === 'string').map((dep) => dep.trim()) : [];
    subtasks.push({ id: fields.id.trim().slice(0, 64), title: fields.title.trim().slice(0, 200), instructions: fields.instructions, dependsOn });
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

/** One step written as text: its first line is the title; it runs after the step before it. */
function sequentialStep(text: string, index: number): Subtask {
  const title = text.split('\n')[0].trim();
  return { id: `s${index + 1}`, title: title.slice(0, 200), instructions: text, dependsOn: index === 0 ? [] : [`s${index}`] };
}

/** The steps of one numbered text (`1. a\n2. b`, `1) a`), or the text unchanged when it is not numbered. */
function numberedSteps(text: string): string[] | string {
  const steps = text
    .split(/^\s*\d+[.)]\s+/m)
    .slice(1)
    .map((step) => step.trim());
  return steps.length >= 2 ? steps : text;
}

/** Where the run stands after a plan step, and what the model is told next. */
export interface PlanMove {
  position: { subtask: string; phase: 'working' | 'summary' };
  /** Subtasks done, and all of them. */
  completed: number;
  total: number;
  /** The next subtask, or null: the summary is next. */
  next: Subtask | null;
}

/** A new plan starts at its first subtask in dependency order. */
export function startPlan(subtasks: Subtask[]): PlanMove {
  const order = executionOrder(subtasks)!;
  return { position: { subtask: order[0].id, phase: 'working' }, completed: 0, total: order.length, next: order[0] };
}

/** The current subtask is done: the next one (in dependency order), or the summary. */
export function completeSubtask(plan: Subtask[], current: string): PlanMove {
  const order = executionOrder(plan)!;
  const index = order.findIndex((subtask) => subtask.id === current);
  const next = order[index + 1] ?? null;
  return { position: next ? { subtask: next.id, phase: 'working' } : { subtask: '', phase: 'summary' }, completed: index + 1, total: order.length, next };
}

/** Subtasks done before `position` (all of them once the run is past the last). */
export function completedBefore(plan: Subtask[], position: { subtask: string; phase: string }): number {
  const order = executionOrder(plan)!;
  return position.phase === 'working' ? order.findIndex((subtask) => subtask.id === position.subtask) : order.length;
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
