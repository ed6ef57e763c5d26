import { CASES } from '../../src/eval/cases.js';
import type { EvalCase } from '../../src/eval/case.js';
import type { RecordedChat, ScriptedReply } from './scripted-ollama.js';

/** Which harness asked: the service always sends its system prompt first, the bare loop only the user's request. */
export type Asker = 'service' | 'baseline';

/** One reply a scripted model gave, with the token counts it reported, for the report's figures to be checked against. */
export interface Served {
  asker: Asker;
  caseId: string;
  promptEvalCount: number;
  evalCount: number;
}

/**
 * Scripted "models" of known quality for `npm run eval` (issue 41). Each finds its case by the request in the
 * conversation and its place by the assistant turns already there, and reports token counts that differ per call
 * (the prompt's message count, the step), so a report that summed the wrong calls would not match.
 */
export class EvalModel {
  readonly served: Served[] = [];

  constructor(
    /**
     * - `follower`: calls the reference steps natively (`message.tool_calls`, as qwen3 on Ollama 0.12 does), then answers.
     * - `chatter`: never calls a tool: answers in prose what it knows without the files (the reference answer of a
     *   case that needs no tool), and otherwise says it would have to look (a small model that ignores the tools).
     * - `texter`: the reference steps written in its content as `<tool_call>{"name":…,"arguments":…}</tool_call>`, the
     *   markup qwen2.5-coder leaves in the text when Ollama's parser misses it (ollama#10899), never natively.
     */
    private readonly kind: 'follower' | 'chatter' | 'texter',
    /** Cases this model never answers (the request hangs), to see a case's bound hold. */
    private readonly hangsOn: string[] = [],
  ) {}

  readonly respond = (body: RecordedChat['body']): ScriptedReply | undefined => {
    const item = caseOf(body);
    if (!item) return undefined;
    if (this.hangsOn.includes(item.id)) return { hang: true };
    const step = body.messages.filter((message) => message.role === 'assistant').length;
    const counts = { promptEvalCount: 40 + body.messages.length * 3, evalCount: 5 + step };
    this.served.push({ asker: body.messages[0]?.role === 'system' ? 'service' : 'baseline', caseId: item.id, ...counts });
    const next = item.reference.steps[step];
    if (this.kind === 'chatter' || !next)
      return { content: this.kind === 'chatter' && item.needsTools ? 'I would have to look at your files to answer that.' : item.reference.answer, ...counts };
    if (this.kind === 'texter') return { content: `<tool_call>\n${JSON.stringify({ name: next.tool, arguments: next.args })}\n</tool_call>`, ...counts };
    return { toolCalls: [{ name: next.tool, arguments: next.args }], ...counts };
  };

  /** The calls served to `asker`, and their token sums. */
  totals(asker: Asker) {
    const calls = this.served.filter((entry) => entry.asker === asker);
    return {
      modelCalls: calls.length,
      promptTokens: calls.reduce((sum, entry) => sum + entry.promptEvalCount, 0),
      outputTokens: calls.reduce((sum, entry) => sum + entry.evalCount, 0),
    };
  }
}

/** The case whose request a user message of the conversation carries. */
function caseOf(body: RecordedChat['body']): EvalCase | undefined {
  const users = body.messages.filter((message) => message.role === 'user').map((message) => message.content);
  return CASES.find((item) => users.some((content) => content.includes(item.request)));
}
