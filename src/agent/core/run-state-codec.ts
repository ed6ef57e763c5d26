import type { ChatMessage, ChatToolCall } from '../../ollama/ollama.gateway.js';
import type { Subtask } from '../plan.js';
import { TEXT_TOOL_MARKER } from '../text-tool-protocol.js';
import type { RunBudgets } from './run-limits.js';
import { newCounters, type RunState, type TurnResult } from './run-state.js';

type StoredMessage = Omit<ChatMessage, 'images'> & { images_base64?: string[] };
type StoredResult = Omit<TurnResult, 'images'> & { images_base64?: string[] };

/** What a resume knows when the stored point does not say it (a version 1 state, a legacy point). */
export type DecodeFallback = Pick<RunState, 'taskId' | 'sessionId' | 'tier' | 'model'> & { budgets: RunBudgets };

/** A stored RunState that cannot be continued: the resume fails the Task with this message. */
export class UnreadableRunState extends Error {
  constructor(why: string) {
    super(`The stored point to continue from cannot be read (${why}); send the request again as a new instruction.`);
    this.name = 'UnreadableRunState';
  }
}

/**
 * The RunState as the resume column keeps it. Image bytes travel as Base64 and come back as Buffers:
 * the `ollama` client would read an image *string* as a file path.
 */
export function encodeRunState(state: RunState): string {
  return JSON.stringify({
    ...state,
    messages: state.messages.map(storeImages),
    turn: { calls: state.turn.calls, results: state.turn.results.map(storeImages) },
  });
}

/**
 * A stored RunState (version 2, or 1 upgraded), or the resume point the agent stored before RunState
 * existed (a pending approval from before an upgrade), converted; anything else fails clearly.
 */
export function decodeRunState(text: string, fallback: DecodeFallback): RunState {
  let stored: Record<string, unknown>;
  try {
    stored = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new UnreadableRunState('not JSON');
  }
  if (typeof stored !== 'object' || stored === null || !Array.isArray(stored.messages)) throw new UnreadableRunState('no conversation');
  const messages = (stored.messages as StoredMessage[]).map(loadImages);
  if (stored.version === 2) {
    const state = stored as unknown as RunState;
    return { ...state, messages, turn: { calls: state.turn.calls, results: (state.turn.results as StoredResult[]).map(loadImages) } };
  }
  if (stored.version === 1) return fromVersion1(stored as unknown as VersionOne, messages, fallback);
  if (stored.version !== undefined) throw new UnreadableRunState(`format version ${JSON.stringify(stored.version)} is unknown to this version of the service`);
  return fromLegacy(stored as unknown as LegacyResumePoint, messages, fallback);
}

/** Version 1 (issue 19): no tool mode, counters, usage or budgets; the tool mode is read from its system prompt. */
type VersionOne = Omit<RunState, 'version' | 'toolMode' | 'think' | 'counters' | 'fingerprints' | 'usage' | 'budgets' | 'steering'> & { version: 1 };

function fromVersion1(stored: VersionOne, messages: ChatMessage[], fallback: DecodeFallback): RunState {
  const textMode = messages[0]?.role === 'system' && messages[0].content.includes(TEXT_TOOL_MARKER);
  return {
    ...stored,
    version: 2,
    messages,
    toolMode: textMode ? 'text' : 'native',
    // Not stored by version 1: the profile resolved for the stored model decides it.
    think: undefined,
    counters: newCounters(),
    fingerprints: {},
    usage: { modelCalls: stored.rounds, toolCalls: 0, tokens: stored.tokens.input + stored.tokens.output, wallMs: 0 },
    budgets: fallback.budgets,
    steering: { pending: [], received: 0 },
  };
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

function fromLegacy(point: LegacyResumePoint, messages: ChatMessage[], fallback: DecodeFallback): RunState {
  if (!point.call?.function || !Array.isArray(point.turnCalls) || !Array.isArray(point.turnResults)) throw new UnreadableRunState('an unknown format');
  const { budgets, ...names } = fallback;
  return fromVersion1(
    {
      version: 1,
      ...names,
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
    },
    messages,
    { ...names, budgets },
  );
}

function storeImages<T extends { images?: unknown[] }>({ images, ...rest }: T): Omit<T, 'images'> & { images_base64?: string[] } {
  return images && images.length > 0 ? { ...rest, images_base64: images.map((image) => Buffer.from(image as Uint8Array).toString('base64')) } : rest;
}

function loadImages<T extends { images_base64?: string[] }>({ images_base64: images, ...rest }: T): Omit<T, 'images_base64'> & { images?: Buffer[] } {
  return images ? { ...rest, images: images.map((data) => Buffer.from(data, 'base64')) } : rest;
}
