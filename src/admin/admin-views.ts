import type { TaskStepEntity } from '../agent/task-step.entity.js';
import { CUT_KEY } from '../audit/audit-bounds.js';
import { cutText } from '../common/cut-text.js';
import type { AuditEventEntity } from '../audit/audit-event.entity.js';
import type { ListedAuditEvent } from '../audit/audit-log.service.js';
import type { TaskReadModel } from '../queue/task-read-model.js';
import type { SessionFileView } from '../session-files/session-files.service.js';
import type { SessionEntity } from '../sessions/session.entity.js';
import { downloadPath } from './task-deliverables.js';

/** Characters of a Task's request and result shown in listings. */
const LIST_TEXT_CHARS = 2000;

/** The admin API's JSON shapes (snake_case, like the MCP surface); entities never leave a service. */
export function mapAuditEvent(event: AuditEventEntity) {
  return {
    seq: Number(event.seq),
    at: event.at,
    actor: event.actor,
    groups: event.groups ? (JSON.parse(event.groups) as string[]) : [],
    source: event.source,
    transport: event.transport,
    client: event.client,
    action: event.action,
    outcome: event.outcome,
    task_id: event.taskId,
    session_id: event.sessionId,
    detail: JSON.parse(event.detail) as unknown,
    prev_hash: event.prevHash,
    hash: event.hash,
  };
}

/**
 * An event in a listing: its detail whole when the listing read all of it, otherwise a marker that
 * says how long it is and where to read it whole, and the head of its JSON text.
 */
export function mapListedAuditEvent({ event, detailChars }: ListedAuditEvent) {
  if (detailChars <= event.detail.length) return mapAuditEvent(event);
  const cut = { [CUT_KEY]: `[cut: detail of ${detailChars} chars; GET /admin/audit/${event.seq} returns it whole]`, preview: event.detail };
  return { ...mapAuditEvent({ ...event, detail: '{}' }), detail: cut };
}

/** `queuePosition`: the Task's place in the queue while it is queued (1 runs next), else null. */
export function mapTask(task: TaskReadModel, queuePosition: number | null = null) {
  return {
    task_id: task.id,
    session_id: task.sessionId,
    owner: task.owner,
    request: task.request,
    status: task.status,
    completed_tasks: task.progress.completedSubtasks,
    total_tasks: task.progress.totalSubtasks,
    current_task: task.progress.currentTask,
    token_usage: { ...task.usage },
    critical_path_tokens: task.progress.criticalPathTokens,
    result: task.result,
    attempt: task.attempt,
    surface: task.surface,
    started_by: task.startedBy,
    created_at: task.createdAt,
    started_at: task.startedAt,
    finished_at: task.finishedAt,
    queue_position: queuePosition,
    duration_ms: task.durationMs,
    trace_id: task.traceId,
  };
}

/** A Task in a listing: its request and result cut (GET /admin/tasks/:id returns them whole). */
export function mapListedTask(task: TaskReadModel, queuePosition: number | null = null) {
  const view = mapTask(task, queuePosition);
  return {
    ...view,
    request: cutText(view.request, LIST_TEXT_CHARS, { mark: 'cut' }),
    result: view.result === null ? null : cutText(view.result, LIST_TEXT_CHARS, { mark: 'cut' }),
  };
}

export function mapStep(step: TaskStepEntity) {
  return {
    seq: Number(step.seq),
    subtask: step.subtask,
    kind: step.kind,
    name: step.name,
    outcome: step.outcome,
    input_tokens: step.inputTokens,
    output_tokens: step.outputTokens,
    duration_ms: step.durationMs,
    started_at: step.startedAt,
    detail: JSON.parse(step.detail) as unknown,
  };
}

export const mapSession = (session: SessionEntity) => ({ session_id: session.id, owner: session.owner, created_at: session.createdAt });

/** A CSV cell: quoted, with quotes doubled, and a leading = + - @ neutralised against formula injection. */
export function csvCell(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return `"${safe.replace(/"/g, '""')}"`;
}

export function mapSessionFilePage(page: { files: SessionFileView[]; nextCursor?: string }) {
  return {
    items: page.files.map((file) => ({ path: file.path, uri: file.uri, mime_type: file.mimeType, size: file.size, download_path: downloadPath(file.sessionId, file.path) })),
    next_cursor: page.nextCursor ?? null,
  };
}
