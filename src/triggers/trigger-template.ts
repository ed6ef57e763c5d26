/** The most characters one field puts into the request. */
const MAX_FIELD_CHARS = 2000;
/** The most characters a rendered request may hold (the event itself is a file under inputs/). */
const MAX_REQUEST_CHARS = 16_000;

const FIELD = /\{\{\s*([A-Za-z0-9_.-]{1,200})\s*\}\}/g;

/**
 * A trigger's `request` with the event filled in: `{{event}}`, `{{delivery}}` and `{{payload.a.b}}` (a
 * path of keys or array indexes into the JSON payload). A field the event does not have renders empty,
 * never as an error: the payload comes from outside, so nothing about it can fail the request. Objects
 * render as JSON; each field and the whole are bounded.
 */
export function renderRequest(template: string, event: { event: string; delivery: string; payload: unknown }): string {
  const rendered = template.replace(FIELD, (_, path: string) => fieldText(lookup(event, path.split('.'))));
  return rendered.length > MAX_REQUEST_CHARS ? `${rendered.slice(0, MAX_REQUEST_CHARS)}…` : rendered;
}

function lookup(root: unknown, path: string[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function fieldText(value: unknown): string {
  if (value === undefined || value === null) return '';
  // A parsed JSON payload holds strings, numbers, booleans, arrays and objects only.
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > MAX_FIELD_CHARS ? `${text.slice(0, MAX_FIELD_CHARS)}…` : text;
}
