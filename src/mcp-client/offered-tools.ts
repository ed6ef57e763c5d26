import { createHash } from 'node:crypto';
import type { Tool as McpTool } from '@modelcontextprotocol/client';
import type { Tool } from 'ollama';
import { cutText } from '../common/cut-text.js';

/**
 * How another server's tools are shown to the model: renamed into one namespace, schemas reduced to
 * what Ollama's tool format takes, descriptions bounded. Pure functions, so the tool block built from
 * the same `tools/list` is byte-identical every time (the prompt prefix Ollama caches).
 */

/** Ollama (like OpenAI) takes function names of letters, digits, `_` and `-`, at most 64 characters. */
const MAX_NAME = 64;
const SEPARATOR = '__';
export const MAX_DESCRIPTION_CHARS = 400;
const MAX_PROPERTY_DESCRIPTION_CHARS = 200;
const MAX_ENUM = 50;
const MAX_DEPTH = 3;
/** Properties kept per object, in the server's order, and the longest name kept: a schema is the server's to choose, the tool block is ours. */
const MAX_PROPERTIES = 50;
const MAX_PROPERTY_NAME = 64;

/**
 * `<server>__<tool>`, with every other character of the tool's name made `_`; a name too long, or taken
 * by another tool of the server after that mapping, ends in a short hash of the original name instead.
 */
export function modelToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const plain = `${server}${SEPARATOR}${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  if (plain.length <= MAX_NAME && !taken.has(plain)) return plain;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  return `${plain.slice(0, MAX_NAME - hash.length - 1)}_${hash}`;
}

/** `*` any run of characters, `?` one; everything else literal. Tool names have no path separators. */
export function globMatches(pattern: string, name: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(name);
}

/** The server's `tools.allow` (empty: all) and `tools.deny` lists, on the tool's own name. */
export function toolAllowed(name: string, filter: { allow: string[]; deny: string[] }): boolean {
  if (filter.allow.length > 0 && !filter.allow.some((pattern) => globMatches(pattern, name))) return false;
  return !filter.deny.some((pattern) => globMatches(pattern, name));
}

type JsonSchema = Record<string, unknown>;

/** The JSON type(s) of a schema node: `type`, or those of its `anyOf`/`oneOf` branches (nullable unions). */
function typeOf(schema: JsonSchema): string | string[] | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type) && schema.type.every((item) => typeof item === 'string')) return schema.type;
  const branches = (Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : []) as JsonSchema[];
  const types = [...new Set(branches.flatMap((branch) => (typeof branch?.type === 'string' ? [branch.type] : [])))];
  if (types.length === 0) return undefined;
  return types.length === 1 ? types[0] : types;
}

/** One property: its type, description, enum, and (bounded in depth) its items and properties. */
function reduceProperty(schema: unknown, depth: number): JsonSchema {
  if (typeof schema !== 'object' || schema === null) return {};
  const node = schema as JsonSchema;
  const reduced: JsonSchema = {};
  const type = typeOf(node);
  if (type !== undefined) reduced.type = type;
  if (typeof node.description === 'string') reduced.description = cutText(node.description.trim(), MAX_PROPERTY_DESCRIPTION_CHARS);
  if (Array.isArray(node.enum)) reduced.enum = node.enum.filter((value) => ['string', 'number', 'boolean'].includes(typeof value)).slice(0, MAX_ENUM);
  if (depth < MAX_DEPTH && typeof node.items === 'object' && node.items !== null) reduced.items = reduceProperty(node.items, depth + 1);
  if (depth < MAX_DEPTH && typeof node.properties === 'object' && node.properties !== null) {
    Object.assign(reduced, reduceObject(node, depth + 1));
  }
  return reduced;
}

function reduceObject(schema: JsonSchema, depth: number): { properties: Record<string, JsonSchema>; required: string[] } {
  const source = (typeof schema.properties === 'object' && schema.properties !== null ? schema.properties : {}) as Record<string, unknown>;
  const kept = Object.entries(source)
    .filter(([key]) => key.length <= MAX_PROPERTY_NAME)
    .slice(0, MAX_PROPERTIES);
  const properties = Object.fromEntries(kept.map(([key, value]) => [key, reduceProperty(value, depth)]));
  const required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string' && key in properties) : [];
  return { properties, required };
}

/** An MCP tool as an Ollama tool: the name given, the bounded description, the reduced input schema. */
export function ollamaTool(name: string, tool: McpTool): Tool {
  const description = (tool.description ?? tool.title ?? tool.name).trim().replace(/\s+/g, ' ');
  const { properties, required } = reduceObject(tool.inputSchema, 1);
  return {
    type: 'function',
    function: { name, description: cutText(description, MAX_DESCRIPTION_CHARS), parameters: { type: 'object', properties, required } },
  };
}

/**
 * How approvals treat a tool under `approval: auto`: `readOnlyHint: true` runs like a read; any other
 * tool counts as a change in `changes` mode and as a command in `commands` mode, which is what the
 * `command` effect asks in (a server's annotations are its claim, so only the safe one is believed).
 */
export function effectOf(tool: McpTool): 'read' | 'command' {
  return tool.annotations?.readOnlyHint === true ? 'read' : 'command';
}
