import type { ChatMessage, ChatToolCall } from '../ollama/ollama.gateway.js';
import type { TurnResult } from './agent-loop.js';
import type { Subtask } from './plan.js';

/** Where the agent stood when it asked: enough to continue the same conversation in a later Task. */
export interface ResumePoint {
  call: ChatToolCall;
  /** sha256 of the file when the diff was made (`absent` for a new file); the approval covers that file only. */
  baseSha256: string | null;
  /** The model's whole conversation at the pause, tool calls and results included. */
  messages: ChatMessage[];
  /** The calls of the turn that paused, and the results of those before `call` (not yet in `messages`). */
  turnCalls: ChatToolCall[];
  turnResults: TurnResult[];
  /** The plan being worked through (null on the direct path) and the subtask id ('' on the direct path or in the summary). */
  plan: Subtask[] | null;
  subtask: string;
}

type StoredMessage = Omit<ChatMessage, 'images'> & { images_base64?: string[] };

/**
 * JSON for the approval's resume column. Image bytes travel as Base64 and come back as Buffers: the
 * `ollama` client would read an image *string* as a file path.
 */
export function encodeResume(point: ResumePoint): string {
  const messages: StoredMessage[] = point.messages.map(({ images, ...message }) =>
    images && images.length > 0 ? { ...message, images_base64: images.map((image) => Buffer.from(image as Uint8Array).toString('base64')) } : message,
  );
  return JSON.stringify({ ...point, messages });
}

export function decodeResume(text: string): ResumePoint {
  const stored = JSON.parse(text) as Omit<ResumePoint, 'messages'> & { messages: StoredMessage[] };
  const messages: ChatMessage[] = stored.messages.map(({ images_base64: images, ...message }) =>
    images ? { ...message, images: images.map((data) => Buffer.from(data, 'base64')) } : message,
  );
  return { ...stored, messages };
}
