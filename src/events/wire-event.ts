import type { RunEvent } from '../agent/core/run-events.js';

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; this leaves room for the envelope. */
export const MAX_PAYLOAD_BYTES = 7000;
/** Answer text per notification: at most 6 bytes a character once JSON-escaped, well under the limit. */
const DELTA_CHARS = 1000;

type AnswerDelta = Extract<RunEvent, { type: 'answer_delta' }>;

/** A delta too long for one notification as consecutive deltas (each applies at the end of the one before). */
export function splitForWire(delta: AnswerDelta): AnswerDelta[] {
  if (delta.text.length <= DELTA_CHARS) return [delta];
  const parts: AnswerDelta[] = [];
  for (let start = 0; start < delta.text.length; start += DELTA_CHARS) {
    parts.push({ ...delta, offset: delta.offset + start, text: delta.text.slice(start, start + DELTA_CHARS), seq: undefined });
  }
  return parts;
}

/**
 * One event as a NOTIFY payload. What a follower reads from the database anyway (a step's record, an
 * ended Task's result) is left out when it would not fit: the notification says *that* it happened.
 */
export function encodeForWire(origin: string, event: RunEvent): string {
  const full = JSON.stringify({ o: origin, e: event });
  if (Buffer.byteLength(full) <= MAX_PAYLOAD_BYTES) return full;
  return JSON.stringify({ o: origin, e: thin(event), thin: true });
}

function thin(event: RunEvent): RunEvent {
  switch (event.type) {
    case 'step':
      return { ...event, step: { ...event.step, name: event.step.name.slice(0, 200), detail: {} } };
    case 'ended':
      return { ...event, result: '' };
    case 'status':
    case 'progress':
      return { ...event, currentTask: event.currentTask?.slice(0, 200) ?? '' };
    case 'file_change':
      return { ...event, change: { ...event.change, path: event.change.path.slice(0, 2000) } };
    default:
      return event;
  }
}

/** The payload of a notification, or null when it is not one of ours (or not JSON). */
export function decodeFromWire(payload: string): { origin: string; event: RunEvent } | null {
  try {
    const parsed = JSON.parse(payload) as { o?: unknown; e?: { type?: unknown; taskId?: unknown } };
    if (typeof parsed.o !== 'string' || typeof parsed.e?.type !== 'string' || typeof parsed.e.taskId !== 'string') return null;
    return { origin: parsed.o, event: parsed.e as RunEvent };
  } catch {
    return null;
  }
}
