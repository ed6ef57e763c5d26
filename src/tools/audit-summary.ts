const MAX_TEXT = 2000;

/**
 * A copy of tool arguments fit for the audit log: Base64 image data is replaced by its length (its
 * SHA-256 is recorded once accepted), and very long strings are cut.
 */
export function summarizeArguments(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (key === 'data_base64') return { base64_chars: value.length };
    return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}… (${value.length} chars)` : value;
  }
  if (Array.isArray(value)) return value.slice(0, 64).map((item) => summarizeArguments(item));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).slice(0, 64).map(([k, v]) => [k, summarizeArguments(v, k)]));
  }
  return value;
}
