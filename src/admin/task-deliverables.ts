import type { TaskStepEntity } from '../agent/task-step.entity.js';
import { mimeTypeOf, sessionFileUri } from '../workspace/session-file-uri.js';
import type { DeliverableDto } from './admin-responses.dto.js';

/** The admin download of a session file, relative to the service's base URL (the console puts its own prefix before it). */
export const downloadPath = (sessionId: string, path: string) => `/admin/sessions/${sessionId}/files/${path.split('/').map(encodeURIComponent).join('/')}`;

/** What a successful file step of the trace says: `path`, and `bytes`/`created` from the file tools or `undoOf` from an undo. */
interface FileStepDetail {
  path?: unknown;
  bytes?: unknown;
  created?: unknown;
  undoOf?: unknown;
}

/**
 * The files a Task created, changed or (an undo) restored, from its own trace's successful file steps:
 * in the order it first wrote them, each once, with what it did first (a file it created stays
 * `created` after later edits) and the size of its last write.
 */
export function deliverablesOf(sessionId: string, trace: TaskStepEntity[]): DeliverableDto[] {
  const files = new Map<string, DeliverableDto>();
  for (const step of trace) {
    if (step.kind !== 'file_op' || step.outcome !== 'ok') continue;
    const detail = JSON.parse(step.detail) as FileStepDetail;
    if (typeof detail.path !== 'string') continue;
    const change = typeof detail.undoOf === 'string' ? 'restored' : detail.created === true ? 'created' : 'modified';
    files.set(detail.path, {
      path: detail.path,
      change: files.get(detail.path)?.change ?? change,
      bytes: typeof detail.bytes === 'number' ? detail.bytes : null,
      uri: sessionFileUri(sessionId, detail.path),
      mime_type: mimeTypeOf(detail.path),
      download_path: downloadPath(sessionId, detail.path),
    });
  }
  return [...files.values()];
}
