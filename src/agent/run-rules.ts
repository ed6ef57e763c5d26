import { createHash } from 'node:crypto';
import { cutText } from '../common/cut-text.js';
import type { AgentConfig } from '../config/agent-config.js';
import type { ChatMessage, ChatReply, ChatToolCall } from '../ollama/ollama.gateway.js';
import type { FileChange } from '../workspace/workspace-files.js';
import type { LimitReached } from './core/run-limits.js';
import type { RunState, TurnResult } from './core/run-state.js';
import { textToolResults } from './text-tool-protocol.js';
import { splitThinking } from './think-tags.js';
import { nativeToolCalls, parseToolCallsFromText, taggedToolCalls } from './tool-call-parser.js';

/** The same call with the same result this many times stops the run. */
export const REPEAT_LIMIT = 3;

/** The round limit the next model call would pass (`agent.max_rounds_per_subtask`, `max_rounds_per_task`), or null. */
export function roundLimitReached(state: Readonly<RunState>, agent: AgentConfig['agent']): LimitReached | null {
  if (state.counters.roundsInStep + 1 > agent.maxRoundsPerSubtask) return { limit: 'max_rounds_per_subtask', detail: `${agent.maxRoundsPerSubtask} model calls in one subtask` };
  if (state.rounds + 1 > agent.maxRoundsPerTask) return { limit: 'max_rounds_per_task', detail: `${agent.maxRoundsPerTask} model calls in this task` };
  return null;
}

/**
 * What a reply says: the answer's text (reasoning leaked as a `<think>` block removed), the tool calls
 * among `known` (native, or recovered from the text), and the assistant message it becomes.
 */
export function readReply(reply: ChatReply, known: ReadonlySet<string>, toolMode: RunState['toolMode']): { answer: string; calls: ChatToolCall[]; message: ChatMessage } {
  const { answer, thinking: leaked } = splitThinking(reply.content);
  const thinking = [reply.thinking, leaked].filter(Boolean).join('\n\n');
  const native = nativeToolCalls(reply.toolCalls);
  const written = native.length > 0 ? native : parseToolCallsFromText(answer, known);
  // qwen3 with think on writes its call inside its reasoning at times (a plan, most often): Ollama's parser
  // leaves it in `thinking`, the reply is empty, and the empty-answer retry met the same twice. Explicit
  // markup there is the call when the model wrote nothing else; reasoning about a call beside an answer is not.
  const calls = known.size === 0 ? [] : written.length > 0 || answer.trim() !== '' ? written : taggedToolCalls(thinking);
  const recovered = native.length === 0 && calls.length > 0;
  const text = toolMode === 'text';
  const message: ChatMessage = {
    role: 'assistant',
    // A native model's recovered calls go back as tool_calls (as if its parser had worked); a text
    // model sees its own <tool_call> blocks, the only form it knows.
    content: recovered && !text ? '' : answer,
    ...(thinking ? { thinking } : {}),
    ...(calls.length > 0 && !text ? { tool_calls: calls } : {}),
  };
  return { answer, calls, message };
}

/** How a turn's results join the conversation: one message per result, or one text block for a text-protocol model. */
export function resultMessages(results: TurnResult[], toolMode: RunState['toolMode'], vision: boolean): ChatMessage[] {
  if (toolMode === 'text') return [textToolResults(results)];
  // A tool's images (an MCP server's image content) go with its result to a vision model; others get the text only.
  return results.map(({ call, output, images }) => ({
    role: 'tool',
    tool_name: call.function.name,
    ...(call.id ? { tool_call_id: call.id } : {}),
    content: output,
    ...(vision && images ? { images } : {}),
  }));
}

export function fingerprintOf(call: ChatToolCall, output: string): string {
  return createHash('sha256').update(call.function.name).update('\0').update(JSON.stringify(call.function.arguments)).update('\0').update(output).digest('hex');
}

/** A call as a failure names it: the tool and its arguments, bounded. */
export function describeCall(call: ChatToolCall): string {
  return `${call.function.name}(${cutText(JSON.stringify(call.function.arguments), 200)})`;
}

/** A file changed twice in one run stays `created` if the first change created it. */
export function mergeChange(previous: FileChange | undefined, next: FileChange): FileChange {
  return previous ? { ...next, created: previous.created || next.created } : next;
}
