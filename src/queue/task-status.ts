/** The six public Agent Task states of the spec (§3.4). */
export const TASK_STATUSES = ['queued', 'planning', 'running', 'completed', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const ACTIVE_STATUSES: readonly TaskStatus[] = ['planning', 'running'];
