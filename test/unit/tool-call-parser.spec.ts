import { describe, expect, it } from '@jest/globals';
import { readReply } from '../../src/agent/run-rules.js';
import { parseToolCallsFromText } from '../../src/agent/tool-call-parser.js';
import type { ChatReply } from '../../src/ollama/ollama.gateway.js';

const KNOWN = new Set(['read_file', 'list_dir', 'run_command']);
const parse = (text: string) => parseToolCallsFromText(text, KNOWN).map((call) => [call.function.name, call.function.arguments]);

describe('parseToolCallsFromText: tool calls models write into their text', () => {
  it('reads Qwen / Hermes <tool_call> blocks, several of them, with prose around', () => {
    const text =
      'First the file.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.ts"}}\n</tool_call>\n<tool_call>\n{"name": "list_dir", "arguments": {}}\n</tool_call>';
    expect(parse(text)).toEqual([
      ['read_file', { path: 'a.ts' }],
      ['list_dir', {}],
    ]);
  });

  it('reads Mistral [TOOL_CALLS] arrays (v0.3) and name[ARGS] pairs (Devstral, Mistral Small 3.2)', () => {
    expect(parse('[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "a"}}, {"name": "list_dir", "arguments": {"path": "."}}]')).toEqual([
      ['read_file', { path: 'a' }],
      ['list_dir', { path: '.' }],
    ]);
    expect(parse('[TOOL_CALLS]read_file[ARGS]{"path": "a"}[TOOL_CALLS]run_command[ARGS]{"command": "npm test"}')).toEqual([
      ['read_file', { path: 'a' }],
      ['run_command', { command: 'npm test' }],
    ]);
  });

  it('reads Llama 3.x <|python_tag|> calls with "parameters", one or several separated by ";"', () => {
    expect(parse('<|python_tag|>{"name": "read_file", "parameters": {"path": "a"}}<|eom_id|>')).toEqual([['read_file', { path: 'a' }]]);
    expect(parse('<|python_tag|>{"name": "list_dir", "parameters": {}}; {"name": "read_file", "parameters": {"path": "b"}}')).toEqual([
      ['list_dir', {}],
      ['read_file', { path: 'b' }],
    ]);
  });

  it('reads a fenced JSON call with prose around it, an array of calls, and OpenAI-style {function: …} items', () => {
    expect(parse('I will check:\n```json\n{"name": "read_file", "arguments": {"path": "a"}}\n```\nthen answer.')).toEqual([['read_file', { path: 'a' }]]);
    expect(parse('```\n[{"function": {"name": "list_dir", "arguments": {}}}]\n```')).toEqual([['list_dir', {}]]);
  });

  it('parses arguments sent as a JSON string instead of an object', () => {
    expect(parse('<tool_call>{"name": "read_file", "arguments": "{\\"path\\": \\"a\\", \\"start_line\\": 2}"}</tool_call>')).toEqual([['read_file', { path: 'a', start_line: 2 }]]);
  });

  it('reads the whole content as one bare call (qwen2.5-coder)', () => {
    expect(parse('{"name": "run_command", "arguments": {"command": "ls"}}')).toEqual([['run_command', { command: 'ls' }]]);
  });

  it('keeps an unknown name inside explicit markup (the loop answers it with an error), but not in bare JSON or a fence', () => {
    expect(parse('<tool_call>{"name": "read_files", "arguments": {"path": "a"}}</tool_call>')).toEqual([['read_files', { path: 'a' }]]);
    expect(parse('{"name": "Alice", "arguments": {"age": 3}}')).toEqual([]);
    expect(parse('Here is the config:\n```json\n{"name": "my-app", "version": "1.0.0"}\n```')).toEqual([]);
  });

  it('does not execute text that only mentions a tool or shows JSON inside prose', () => {
    expect(parse('I could use read_file to open a.ts, but it is not needed.')).toEqual([]);
    expect(parse('Call it like {"name": "read_file", "arguments": {"path": "a"}} when you need it.')).toEqual([]);
    expect(parse('Use <tool_call> tags to call tools.')).toEqual([]);
    expect(parse('')).toEqual([]);
  });

  it('ignores broken payloads: invalid JSON, arguments that are not an object, a missing name', () => {
    expect(parse('<tool_call>{"name": "read_file", "arguments": {"path": </tool_call>')).toEqual([]);
    expect(parse('<tool_call>{"name": "read_file", "arguments": [1, 2]}</tool_call>')).toEqual([]);
    expect(parse('[TOOL_CALLS][{"arguments": {}}]')).toEqual([]);
    expect(parse('[TOOL_CALLS]read_file[ARGS]{"path": "a"')).toEqual([]);
  });
});

describe('readReply: a call written inside the reasoning (issue 35, thinking on)', () => {
  const reply = (content: string, thinking: string): ChatReply => ({ content, thinking, toolCalls: [], doneReason: 'stop', promptEvalCount: 10, evalCount: 5 });
  const planCall = '<tool_call>\n{"name": "plan", "arguments": {"subtasks": ["Read math.js", "Fix add()"]}}\n</tool_call>';
  const known = new Set(['plan', 'read_file']);

  it('recovers a <tool_call> block qwen3 (think: true) left in message.thinking when the reply has nothing else', () => {
    const read = readReply(reply('', `The user wants a fix. I will plan first.\n${planCall}`), known, 'native');
    expect(read.calls.map((call) => [call.function.name, call.function.arguments])).toEqual([['plan', { subtasks: ['Read math.js', 'Fix add()'] }]]);
    expect(read.message).toMatchObject({ role: 'assistant', content: '', tool_calls: read.calls });
  });

  it('recovers it from a <think> block left in the content (a template without the thinking parser)', () => {
    const read = readReply(reply(`<think>I will plan first.\n${planCall}</think>\n\n`, ''), known, 'native');
    expect(read.calls.map((call) => call.function.name)).toEqual(['plan']);
  });

  it('leaves it when the model also answered: reasoning about a call is not a call', () => {
    expect(readReply(reply('Done: add() is fixed.', `Should I call it again? ${planCall}`), known, 'native').calls).toEqual([]);
  });

  it('takes only explicit markup from the reasoning, never a bare JSON object or prose naming a tool', () => {
    expect(readReply(reply('', '{"name": "read_file", "arguments": {"path": "a"}}'), known, 'native').calls).toEqual([]);
    expect(readReply(reply('', 'I could call read_file on a.'), known, 'native').calls).toEqual([]);
  });
});
