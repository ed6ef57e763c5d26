import type { Tool } from 'ollama';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';

/**
 * Checks a call against the tools offered: the name, then the arguments against the tool's JSON schema
 * (required keys, types, no extra keys). Returns null when the call is valid, otherwise an error for the
 * model naming what was wrong and the valid schema, so it can try again (Ollama's own harness answers
 * `Error: unknown tool: X` the same way instead of aborting the run).
 */
export function invalidCall(call: ChatToolCall, tools: Tool[]): string | null {
  const { name, arguments: args } = call.function;
  const tool = tools.find((candidate) => candidate.function.name === name);
  if (!tool) {
    return `Error: unknown tool "${name}". The tools are: ${tools.map((candidate) => candidate.function.name).join(', ')}.`;
  }
  const parameters = tool.function.parameters ?? {};
  const properties = (parameters.properties ?? {}) as Record<string, { type?: string | string[] }>;
  const problems: string[] = [];
  for (const key of parameters.required ?? []) {
    if (args[key] === undefined || args[key] === null) problems.push(`missing required argument "${key}"`);
  }
  for (const [key, value] of Object.entries(args)) {
    const property = properties[key];
    if (!property) problems.push(`unknown argument "${key}"`);
    else if (value !== null && value !== undefined && !hasType(value, property.type)) {
      problems.push(`"${key}" must be ${String(property.type)} (got ${typeName(value)})`);
    }
  }
  if (problems.length === 0) return null;
  return `Error: invalid arguments for ${name}: ${problems.join('; ')}. Schema: ${JSON.stringify(parameters)}`;
}

function hasType(value: unknown, type: string | string[] | undefined): boolean {
  if (type === undefined) return true;
  const types = Array.isArray(type) ? type : [type];
  return types.some((expected) => typeName(value) === expected || (expected === 'number' && typeName(value) === 'integer') || encodes(value, expected));
}

/** A list or an object a model wrote as JSON text (small models often do); the tool reads it. */
function encodes(value: unknown, expected: string): boolean {
  if (typeof value !== 'string' || (expected !== 'array' && expected !== 'object')) return false;
  try {
    return typeName(JSON.parse(value)) === expected;
  } catch {
    return false;
  }
}

function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (value === null) return 'null';
  return typeof value;
}
