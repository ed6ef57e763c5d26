import type { StepKind } from '../task-step.entity.js';

/** One trace step as a run records it (`task_steps`); defined with the seams so RunEvents can carry it. */
export interface StepRecord {
  taskId: string;
  subtask: string;
  kind: StepKind;
  name: string;
  outcome: 'ok' | 'error' | 'denied' | 'timeout' | 'cancelled';
  inputTokens?: number;
  outputTokens?: number;
  durationMs: number;
  startedAt: string;
  detail: Record<string, unknown>;
}
