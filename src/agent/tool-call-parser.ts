import type { ChatToolCall } from '../ollama/ollama.gateway.js';

/**
 * Recovers tool calls that a model wrote into its text instead of `message.tool_calls`: qwen2.5-coder
 * and granite leave Ollama's parser behind (ollama#10899, #11662), models without the `tools`
 * capability are asked to write them (the text tool protocol), and each family has its own markup:
 *
 * - `<tool_call>{…}</tool_call>`: Qwen 2.5/3, Hermes; also what the text protocol asks for.
 * - `[TOOL_CALLS][{…}, …]`: Mistral 7B v0.3, Mistral Nemo; `[TOOL_CALLS]name[ARGS]{…}`: Devstral,
 *   Mistral Small 3.2, Magistral.
 * - `<|python_tag|>{"name": …, "parameters": {…}}`: Llama 3.1/3.2/3.3, `;`-separated when several.
 * - a fenced ```json block holding a call (or an array of calls).
 * - the whole content as one bare call object or array (qwen2.5-coder).
 *
 * Markup is explicit intent, so a call there is returned whatever its name (the loop answers an
 * unknown name with an error the model can act on). A fenced block or bare JSON counts only when it
 * names a known tool: otherwise it is JSON the user asked for. Prose merely mentioning a tool is text.
 */
export function parseToolCallsFromText(content: string, knownTools: ReadonlySet<string>): ChatToolCall[] {
  const text = content.trim();
  if (text === '') return [];
  const tagged = taggedToolCalls(text);
  if (tagged.length > 0) return tagged;
  const mistral = mistralCalls(text);
  if (mistral.length > 0) return mistral;
  const pythonTag = text.indexOf('<|python_tag|>');
  if (pythonTag >= 0) {
    const body = text.slice(pythonTag + '<|python_tag|>'.length).replace(/<\|(?:eom_id|eot_id)\|>[\s\S]*$/, '');
    const calls = body.split(/;\s*(?=\{)/).flatMap((part) => callsIn(part, null));
    if (calls.length > 0) return calls;
  }
  const fenced = [...text.matchAll(/```(?:json|tool_call|tool_code)?\s*\n?([\s\S]*?)```/g)].flatMap((match) => callsIn(match[1], knownTools));
  if (fenced.length > 0) return fenced;
  return callsIn(text, knownTools);
}

/** The calls in explicit `<tool_call>` markup only (Qwen, Hermes): what a model's reasoning may hold as a call. */
export function taggedToolCalls(text: string): ChatToolCall[] {
  return [...text.matchAll(/<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/g)].flatMap((match) => callsIn(match[1], null));
}

/**
 * Native `message.tool_calls` as the loop uses them. Ollama sends `arguments` as an object; some
 * templates and OpenAI-style proxies in front of Ollama send OpenAI's shape, a JSON *string*, which is
 * read here instead of being refused as a call without arguments. A string that is not a JSON object
 * leaves the arguments empty, so the schema check tells the model what was missing.
 */
export function nativeToolCalls(calls: ChatToolCall[]): ChatToolCall[] {
  return calls.map((call) => {
    const raw = call.function?.arguments as unknown;
    if (typeof raw !== 'string') return call;
    const parsed = parseJson(raw);
    const args = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    return { ...call, function: { ...call.function, arguments: args } };
  });
}

/** `[TOOL_CALLS][…]` (array form) or one or more `[TOOL_CALLS]name[ARGS]{…}`. */
function mistralCalls(text: string): ChatToolCall[] {
  const start = text.indexOf('[TOOL_CALLS]');
  if (start < 0) return [];
  const rest = text.slice(start + '[TOOL_CALLS]'.length).trim();
  if (rest.startsWith('[')) return callsIn(leadingJson(rest) ?? '', null);
  const calls: ChatToolCall[] = [];
  for (const match of text.matchAll(/\[TOOL_CALLS\]\s*([A-Za-z_][\w.-]*)\s*\[ARGS\]\s*/g)) {
    const args = leadingJson(text.slice(match.index + match[0].length));
    const call = args === null ? null : toCall({ name: match[1], arguments: args }, null);
    if (call) calls.push(call);
  }
  return calls;
}

/** Calls in one JSON payload (an object or an array of them); none unless every item is a call. */
function callsIn(payload: string, knownTools: ReadonlySet<string> | null): ChatToolCall[] {
  const parsed = parseJson(payload.trim());
  const items = Array.isArray(parsed) ? parsed : [parsed];
  const calls = items.map((item) => toCall(item, knownTools));
  return calls.length > 0 && calls.every((call) => call !== null) ? calls : [];
}

/**
 * `{name, arguments}`, `{name, parameters}` (Llama) or OpenAI's `{function: {name, arguments}}`;
 * arguments may be a JSON string (some models stringify them as OpenAI's API does).
 */
function toCall(item: unknown, knownTools: ReadonlySet<string> | null): ChatToolCall | null {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return null;
  const record = item as Record<string, unknown>;
  const inner = (typeof record.function === 'object' && record.function !== null ? record.function : record) as Record<string, unknown>;
  const name = inner.name;
  if (typeof name !== 'string' || name.trim() === '') return null;
  if (knownTools && !knownTools.has(name)) return null;
  const raw = inner.arguments ?? inner.parameters ?? {};
  const args = typeof raw === 'string' ? parseJson(raw) : raw;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return null;
  return { function: { name, arguments: args as Record<string, unknown> } };
}

/** The first complete JSON value at the start of `text` (models add prose or more calls after it). */
function leadingJson(text: string): string | null {
  const open = text[0];
  if (open !== '{' && open !== '[') return null;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if ((char === '}' || char === ']') && --depth === 0) return text.slice(0, i + 1);
  }
  return null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
