import type { ChatMessage, ChatToolCall } from '../../ollama/ollama.gateway.js';
import type { Subtask } from '../plan.js';
import type { RunState, TurnResult } from './run-state.js';

type StoredMessage = Omit<ChatMessage, 'images'> & { images_base64?: string[] };

/** A stored RunState that cannot be continued: the resume fails the Task with this message. */
export class UnreadableRunState extends Error {
  constructor(why: string) {
    super(`The stored point to continue from cannot be read (${why}); send the request again as a new instruction.`);
    this.name = 'UnreadableRunState';
  }
}

/**
 * The RunState as the approval's resume column keeps it. Image bytes travel as Base64 and come back
 * as Buffers: the `ollama` client would read an image *string* as a file path.
 */
export function encodeRunState(state: RunState): string {
  return JSON.stringify({ ...state, messages: state.messages.map(storeMessage) });
}

/**
 * A stored RunState, or the resume point the agent stored before RunState existed (a pending approval
 * from before an upgrade), converted; anything else fails clearly.
 */
export function decodeRunState(text: string, fallback: Pick<RunState, 'taskId' | 'sessionId' | 'tier' | 'model'>): RunState {
  let stored: Record<string, unknown>;
  try {
    stored = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new UnreadableRunState('not JSON');
  }
  if (typeof stored !== 'object' || stored === null || !Array.isArray(stored.messages)) throw new UnreadableRunState('no conversation');
  const messages = (stored.messages as StoredMessage[]).map(loadMessage);
  if (stored.version === 1) return { ...(stored as unknown as RunState), messages };
  if (stored.version !== undefined) throw new UnreadableRunState(`format version ${JSON.stringify(stored.version)} is unknown to this version of the service`);
  return fromLegacy(stored as unknown as LegacyResumePoint, messages, fallback);
}

/** The resume point of approval-resume.ts (until issue 19): the conversation, the turn and where the plan stood. */
interface LegacyResumePoint {
  call: ChatToolCall;
  baseSha256: string | null;
  turnCalls: ChatToolCall[];
  turnResults: TurnResult[];
  plan: Subtask[] | null;
  subtask: string;
}

function fromLegacy(point: LegacyResumePoint, messages: ChatMessage[], fallback: Pick<RunState, 'taskId' | 'sessionId' | 'tier' | 'model'>): RunState {
  if (!point.call?.function || !Array.isArray(point.turnCalls) || !Array.isArray(point.turnResults)) throw new UnreadableRunState('an unknown format');
  return {
    version: 1,
    ...fallback,
    mode: 'agent',
    messages,
    plan: point.plan,
    // The old loop had told the model each subtask's instruction (and the summary's) as a user turn.
    position: { subtask: point.subtask, phase: point.plan && point.subtask === '' ? 'summary' : 'working' },
    turn: { calls: point.turnCalls, results: point.turnResults },
    changes: {},
    tokens: { input: 0, output: 0, bySubtask: {} },
    rounds: 0,
    pause: { kind: 'approval', id: '', call: point.call, baseSha256: point.baseSha256 },
  };
}

function storeMessage({ images, ...message }: ChatMessage): StoredMessage {
  return images && images.length > 0 ? { ...message, images_base64: images.map((image) => Buffer.from(image as Uint8Array).toString('base64')) } : message;
}

function loadMessage({ images_base64: images, ...message }: StoredMessage): ChatMessage {
  return images ? { ...message, images: images.map((data) => Buffer.from(data, 'base64')) } : message;
}
