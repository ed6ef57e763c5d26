import { shownEscaped } from '../common/shown-text.js';

/**
 * A form another MCP server asks the person to fill (elicitation), in the flat shape MCP allows: each
 * field a string (free text, or one choice), a number, an integer, a boolean, or several choices. Every
 * choice has a title (an untitled enum's title is its value), so one shape covers MCP's enum flavours.
 */
export type FormField = { title?: string; description?: string } & (
  | { type: 'string'; minLength?: number; maxLength: number; format?: 'email' | 'uri' | 'date' | 'date-time'; default?: string }
  | { type: 'string'; oneOf: Choice[]; default?: string }
  | { type: 'number' | 'integer'; minimum?: number; maximum?: number; default?: number }
  | { type: 'boolean'; default?: boolean }
  | { type: 'array'; items: { anyOf: Choice[] }; minItems?: number; maxItems?: number; default?: string[] }
);

export interface Choice {
  const: string;
  title: string;
}

export interface FormSchema {
  type: 'object';
  properties: Record<string, FormField>;
  required: string[];
}

/** One field's answer: text or a choice, a number, yes/no, or several choices. */
export type FormValue = string | number | boolean | string[];

/** The person's answer, as the server is told it: the content only with `accept`. */
export type FormAnswer = { action: 'accept'; content: Record<string, FormValue> } | { action: 'decline' } | { action: 'cancel' };

/** The schema as the person's client shows it: every text a server wrote escaped like every approval text. */
export function shownFormSchema(schema: FormSchema): FormSchema {
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([key, field]) => {
      const shown: Record<string, unknown> = { ...field };
      if (field.title !== undefined) shown.title = shownEscaped(field.title);
      if (field.description !== undefined) shown.description = shownEscaped(field.description, ['\n']);
      if ('oneOf' in field) shown.oneOf = field.oneOf.map((choice) => ({ const: choice.const, title: shownEscaped(choice.title) }));
      if (field.type === 'array') shown.items = { anyOf: field.items.anyOf.map((choice) => ({ const: choice.const, title: shownEscaped(choice.title) })) };
      return [key, shown as FormField];
    }),
  );
  return { type: 'object', properties, required: schema.required };
}

/** One field's value checked against its field; undefined when it does not fit. */
function fieldValue(field: FormField, value: unknown): FormValue | undefined {
  switch (field.type) {
    case 'string':
      if (typeof value !== 'string') return undefined;
      if ('oneOf' in field) return field.oneOf.some((choice) => choice.const === value) ? value : undefined;
      if (value.length > field.maxLength || (field.minLength !== undefined && value.length < field.minLength)) return undefined;
      return value;
    case 'number':
    case 'integer':
      if (typeof value !== 'number' || !Number.isFinite(value) || (field.type === 'integer' && !Number.isInteger(value))) return undefined;
      if ((field.minimum !== undefined && value < field.minimum) || (field.maximum !== undefined && value > field.maximum)) return undefined;
      return value;
    case 'boolean':
      return typeof value === 'boolean' ? value : undefined;
    case 'array': {
      if (!Array.isArray(value) || new Set(value).size !== value.length) return undefined;
      if (!value.every((item) => typeof item === 'string' && field.items.anyOf.some((choice) => choice.const === item))) return undefined;
      if ((field.minItems !== undefined && value.length < field.minItems) || (field.maxItems !== undefined && value.length > field.maxItems)) return undefined;
      return value as string[];
    }
  }
}

/** What a field takes, for the message of an answer that does not fit it. */
function fieldTakes(field: FormField): string {
  switch (field.type) {
    case 'string':
      if ('oneOf' in field) return `one of ${field.oneOf.map((choice) => JSON.stringify(choice.const)).join(', ')}`;
      return `text of ${field.minLength ?? 0} to ${field.maxLength} characters`;
    case 'number':
    case 'integer':
      return `${field.type === 'integer' ? 'an integer' : 'a number'}${field.minimum !== undefined ? ` from ${field.minimum}` : ''}${field.maximum !== undefined ? ` to ${field.maximum}` : ''}`;
    case 'boolean':
      return 'true or false';
    case 'array':
      return `a list of distinct choices among ${field.items.anyOf.map((choice) => JSON.stringify(choice.const)).join(', ')}${field.minItems !== undefined ? `, at least ${field.minItems}` : ''}${field.maxItems !== undefined ? `, at most ${field.maxItems}` : ''}`;
  }
}

/**
 * The content of an `accept` answer checked against the form: only its fields, each of its type and
 * bounds (a choice among the choices), every required one present; otherwise the first problem, for a
 * person to read (the console says it; tasks/update ignores such an answer).
 */
export function checkFormContent(content: unknown, schema: FormSchema): { content: Record<string, FormValue> } | { problem: string } {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return { problem: 'the content must be an object of the form’s fields' };
  const read: Record<string, FormValue> = {};
  for (const [key, value] of Object.entries(content as Record<string, unknown>)) {
    const field = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
    if (!field) return { problem: `the form has no field ${JSON.stringify(key)} (its fields: ${Object.keys(schema.properties).join(', ')})` };
    const checked = fieldValue(field, value);
    if (checked === undefined) return { problem: `field ${JSON.stringify(key)} takes ${fieldTakes(field)}` };
    read[key] = checked;
  }
  const missing = schema.required.filter((key) => !Object.hasOwn(read, key));
  return missing.length > 0 ? { problem: `required field${missing.length > 1 ? 's' : ''} missing: ${missing.join(', ')}` } : { content: read };
}

/** What a field asking for a secret is called (by its key or title): its answer is not audited. */
const SECRET_FIELD = /pass(word|phrase|code)?|passwd|secret|token|\bpin\b|^pin$|otp|one[- ]time|api[ _-]?key|credential|private[ _-]?key|暗証|パスワード|秘密/i;

/**
 * An answer's content as the audit log keeps it: the value of every text or number field that asks for
 * a secret (its key or title, the label the person answers, says password, PIN, token, OTP, API key…) as
 * `[REDACTED]`. Not the description: "do not give us your PIN" describes a field that asks for none.
 * The server still gets the answer; the person's secret does not stay in the log for every admin.
 */
export function auditedFormContent(content: Record<string, FormValue>, schema: FormSchema): Record<string, FormValue> {
  const secret = (key: string) => {
    const field = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
    if (field?.type === 'boolean') return false;
    return [key, field?.title ?? ''].some((text) => SECRET_FIELD.test(text));
  };
  return Object.fromEntries(Object.entries(content).map(([key, value]) => [key, secret(key) ? '[REDACTED]' : value]));
}

/** The content of an `accept` answer when it fits the form (checkFormContent); null otherwise (the answer is then ignored, as the Tasks extension requires of a malformed one). */
export function readFormContent(content: unknown, schema: FormSchema): Record<string, FormValue> | null {
  const checked = checkFormContent(content, schema);
  return 'content' in checked ? checked.content : null;
}
