import type { TracedTask } from '../telemetry/traced-task.js';
import type { TaskEntity } from './task.entity.js';

/** What telemetry is told of a Task: its trace ids and the few fields its spans and metrics name. */
export const tracedTask = (task: TaskEntity): TracedTask => ({
  id: task.id,
  sessionId: task.sessionId,
  traceId: task.traceId,
  spanId: task.spanId,
  traceParent: task.traceParent,
  traceState: task.traceState,
  surface: task.surface,
  tier: task.tier,
  mode: task.mode,
  createdAt: task.createdAt,
  request: task.request,
});
