import { shownEscaped } from './shown-text.js';

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

/**
 * The content of an `accept` answer when it fits the form: only its fields, each of its type and
 * bounds (a choice among the choices), every required one present; null otherwise (the answer is
 * then ignored, as the Tasks extension requires of a malformed one).
 */
export function readFormContent(content: unknown, schema: FormSchema): Record<string, FormValue> | null {
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return null;
  const read: Record<string, FormValue> = {};
  for (const [key, value] of Object.entries(content as Record<string, unknown>)) {
    const field = Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
    if (!field) return null;
    const checked = fieldValue(field, value);
    if (checked === undefined) return null;
    read[key] = checked;
  }
  return schema.required.every((key) => Object.hasOwn(read, key)) ? read : null;
}
