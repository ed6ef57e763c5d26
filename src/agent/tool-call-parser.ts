import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import { TOOL_NAMES } from './tool-definitions.js';

/**
 * Recovers tool calls that a model wrote into its text instead of `tool_calls` (qwen2.5-coder,
 * granite and others do). Strict on purpose: only when the whole content is calls (a JSON object or
 * array of `{name, arguments}`, or `<tool_call>` blocks, optionally in a code fence) naming known
 * tools. Anything else is an ordinary answer.
 */
export function parseToolCallsFromText(content: string): ChatToolCall[] {
  const text = content.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1').trim();
  if (text.length === 0) return [];
  const tagged = [...text.matchAll(/<tool_call>\s*([\s\S]*?)\s*<\/tool_call>/g)];
  const payloads = tagged.length > 0 ? tagged.map((match) => match[1]) : [text];
  if (tagged.length > 0 && text.replace(/<tool_call>[\s\S]*?<\/tool_call>/g, '').trim() !== '') return [];
  const calls: ChatToolCall[] = [];
  for (const payload of payloads) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      return [];
    }
    for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
      const call = asToolCall(item);
      if (!call) return [];
      calls.push(call);
    }
  }
  return calls;
}

function asToolCall(item: unknown): ChatToolCall | null {
  if (typeof item !== 'object' || item === null) return null;
  const record = item as Record<string, unknown>;
  const inner = (typeof record.function === 'object' && record.function !== null ? record.function : record) as Record<string, unknown>;
  const name = inner.name;
  const args = inner.arguments ?? inner.parameters ?? {};
  if (typeof name !== 'string' || !TOOL_NAMES.has(name)) return null;
  const parsedArgs = typeof args === 'string' ? safeJson(args) : args;
  if (typeof parsedArgs !== 'object' || parsedArgs === null || Array.isArray(parsedArgs)) return null;
  return { function: { name, arguments: parsedArgs as Record<string, unknown> } };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
