import type { ElicitRequest } from '@modelcontextprotocol/client';
import { cutText } from '../common/cut-text.js';
import type { FormSchema } from '../agent/core/tool-source.js';

type FormField = FormSchema['properties'][string];
type Choice = { const: string; title: string };

/** Bounds of a form a person is shown: a server cannot fill the screen or the approvals table. */
const MAX_FIELDS = 20;
const MAX_CHOICES = 50;
const MAX_TITLE_CHARS = 100;
const MAX_DESCRIPTION_CHARS = 500;
const MAX_CHOICE_CHARS = 200;
/** The longest free text a person may give one field (a server's own `maxLength` may be lower). */
export const MAX_TEXT_ANSWER_CHARS = 2000;
const FIELD_KEY = /^[A-Za-z0-9_.-]{1,64}$/;
type TextFormat = Extract<FormField, { format?: unknown }>['format'];
const FORMATS = new Set<string>(['email', 'uri', 'date', 'date-time'] satisfies TextFormat[]);

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);
const finite = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
/** The entries of `values` that are set (a schema keyword the server gave and this form keeps). */
function defined<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
const count = (value: unknown): number | undefined => (Number.isInteger(value) && (value as number) >= 0 ? (value as number) : undefined);

/** Titled choices from MCP's enum flavours: `enum` (with the legacy `enumNames`), or `oneOf`/`anyOf` of `{const, title}`. */
function choicesOf(node: Node, key: 'oneOf' | 'anyOf'): Choice[] | undefined {
  let choices: Choice[] | undefined;
  if (Array.isArray(node.enum) && node.enum.every((value) => typeof value === 'string')) {
    const names = Array.isArray(node.enumNames) && node.enumNames.length === node.enum.length ? (node.enumNames as unknown[]) : [];
    choices = node.enum.map((value: string, index) => ({ const: value, title: typeof names[index] === 'string' ? names[index] : value }));
  } else if (Array.isArray(node[key]) && (node[key] as unknown[]).every((choice) => isNode(choice) && typeof choice.const === 'string')) {
    choices = (node[key] as Node[]).map((choice) => ({ const: choice.const as string, title: typeof choice.title === 'string' ? choice.title : (choice.const as string) }));
  }
  if (!choices || choices.length === 0 || choices.length > MAX_CHOICES || choices.some((choice) => choice.const.length > MAX_CHOICE_CHARS)) return undefined;
  return choices.map((choice) => ({ const: choice.const, title: cutText(choice.title, MAX_CHOICE_CHARS) }));
}

/** One field of a server's form as the person may answer it, or why it cannot be asked. */
function fieldOf(node: unknown): FormField | string {
  if (!isNode(node)) return 'not a schema';
  const texts = {
    ...(typeof node.title === 'string' ? { title: cutText(node.title, MAX_TITLE_CHARS) } : {}),
    ...(typeof node.description === 'string' ? { description: cutText(node.description, MAX_DESCRIPTION_CHARS) } : {}),
  };
  switch (node.type) {
    case 'string': {
      const choices = node.enum !== undefined || node.oneOf !== undefined ? choicesOf(node, 'oneOf') : undefined;
      const fallback = typeof node.default === 'string' ? { default: node.default } : {};
      if (choices) return { ...texts, type: 'string', oneOf: choices, ...(choices.some((choice) => choice.const === fallback.default) ? fallback : {}) };
      if (node.enum !== undefined || node.oneOf !== undefined) return `its choices are not ${MAX_CHOICES} or fewer strings`;
      const maxLength = Math.min(count(node.maxLength) ?? MAX_TEXT_ANSWER_CHARS, MAX_TEXT_ANSWER_CHARS);
      const minLength = count(node.minLength);
      return {
        ...texts,
        type: 'string',
        maxLength,
        ...(minLength !== undefined && minLength <= maxLength ? { minLength } : {}),
        ...(typeof node.format === 'string' && FORMATS.has(node.format) ? { format: node.format as TextFormat } : {}),
        ...(fallback.default !== undefined && fallback.default.length <= maxLength ? fallback : {}),
      };
    }
    case 'number':
    case 'integer': {
      return { ...texts, type: node.type, ...defined({ minimum: finite(node.minimum), maximum: finite(node.maximum), default: finite(node.default) }) };
    }
    case 'boolean':
      return { ...texts, type: 'boolean', ...(typeof node.default === 'boolean' ? { default: node.default } : {}) };
    case 'array': {
      const choices = isNode(node.items) ? choicesOf(node.items, 'anyOf') : undefined;
      if (!choices) return `a list whose items are not ${MAX_CHOICES} or fewer string choices`;
      const fallback = Array.isArray(node.default) && node.default.every((value) => choices.some((choice) => choice.const === value)) ? { default: node.default as string[] } : {};
      return { ...texts, type: 'array', items: { anyOf: choices }, ...defined({ minItems: count(node.minItems), maxItems: count(node.maxItems) }), ...fallback };
    }
    default:
      return `of type ${JSON.stringify(node.type ?? null)}, which MCP forms do not have`;
  }
}

/**
 * A server's `elicitation/create` as a form for the person: MCP's flat object of string (free text or a
 * choice), number, integer, boolean and multiple-choice fields, bounded (fields, choices, texts, text
 * answers); or why it cannot be put to a person (a URL elicitation, which this client does not declare, a
 * nested or unknown field, too many fields). Texts are kept as the server wrote them: they are escaped
 * where they are shown.
 */
export function readRequestedForm(params: ElicitRequest['params']): { message: string; schema: FormSchema } | { problem: string } {
  const request = params as Node;
  if (request.mode !== undefined && request.mode !== 'form') return { problem: `a ${JSON.stringify(request.mode)} elicitation (only forms are declared)` };
  if (typeof request.message !== 'string') return { problem: 'no message' };
  const requested = request.requestedSchema;
  if (!isNode(requested) || requested.type !== 'object' || !isNode(requested.properties)) return { problem: 'the requested schema is not an object of fields' };
  const entries = Object.entries(requested.properties);
  if (entries.length > MAX_FIELDS) return { problem: `${entries.length} fields (at most ${MAX_FIELDS})` };
  const properties: Record<string, FormField> = {};
  for (const [key, node] of entries) {
    if (!FIELD_KEY.test(key)) return { problem: `the field name ${JSON.stringify(cutText(key, 80))} is not 1 to 64 letters, digits, _ . -` };
    const field = fieldOf(node);
    if (typeof field === 'string') return { problem: `the field ${key} is ${field}` };
    properties[key] = field;
  }
  const required = Array.isArray(requested.required) ? requested.required.filter((key): key is string => typeof key === 'string' && Object.hasOwn(properties, key)) : [];
  return { message: request.message, schema: { type: 'object', properties, required: [...new Set(required)] } };
}
