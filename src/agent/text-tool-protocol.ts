import type { Tool } from 'ollama';
import type { ChatMessage, ChatToolCall } from '../ollama/ollama.gateway.js';

/**
 * Tool use for models without the `tools` capability (Ollama answers 400 "does not support tools" when
 * they are sent tools: gemma2, llama3.2-vision, deepseek-r1 before its tool template, phi4). The tool list
 * and the call format go into the system prompt, calls are parsed from the answer (tool-call-parser), and
 * results come back as a user message, since such templates do not render `role: "tool"`.
 */
/** A line of the instructions that no other prompt has: a stored version 1 state in text mode is recognised by it. */
export const TEXT_TOOL_MARKER = 'You call tools by writing, for each call, one block exactly like this';

export function textToolInstructions(tools: Tool[]): string {
  const lines = tools.map((tool) => {
    const parameters = tool.function.parameters ?? {};
    const required = new Set(parameters.required ?? []);
    const properties = Object.entries((parameters.properties ?? {}) as Record<string, { type?: string; description?: string }>);
    const signature = properties.map(([key, property]) => `${key}${required.has(key) ? '' : '?'}: ${property.type}`).join(', ');
    return `- ${tool.function.name}(${signature}): ${tool.function.description}`;
  });
  return `

${TEXT_TOOL_MARKER} and nothing else on its lines:
<tool_call>{"name": "read_file", "arguments": {"path": "README.md"}}</tool_call>
You may write several blocks in one reply. Then stop: the results come back in <tool_response> blocks.
Only a <tool_call> block runs a tool; mentioning a tool in prose does nothing. When the work is done, answer without any <tool_call> block.
Tools (arguments marked ? are optional):
${lines.join('\n')}`;
}

/** The results of one round of text tool calls, as the single user message that follows the calls. */
export function textToolResults(results: { call: ChatToolCall; output: string }[]): ChatMessage {
  const blocks = results.map(({ call, output }) => `<tool_response name="${call.function.name}">\n${output}\n</tool_response>`);
  return { role: 'user', content: blocks.join('\n') };
}
