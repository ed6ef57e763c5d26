import { describe, expect, it } from '@jest/globals';
import type { Tool } from 'ollama';
import { AnswerStream } from '../../src/agent/answer-stream.js';
import { CoreToolSource, PLAN_TOOL } from '../../src/agent/core-tools.js';
import type { RunEvent } from '../../src/agent/core/run-events.js';
import { newRunState, type RunState } from '../../src/agent/core/run-state.js';
import { decodeRunState, encodeRunState } from '../../src/agent/core/run-state-codec.js';
import type { ToolCallContext, ToolExecutor, ToolOutcome } from '../../src/agent/core/tool-source.js';
import type { ModelProfile } from '../../src/agent/model-profile.js';
import { RunLoop, type RunOutcome } from '../../src/agent/run-loop.js';
import { nativeToolCalls } from '../../src/agent/tool-call-parser.js';
import { FILE_TOOLS, COMMAND_TOOL } from '../../src/agent/tool-definitions.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { OllamaError } from '../../src/ollama/ollama-error.js';
import type { ChatMessage, ChatRequest, ChatReply, OllamaGateway } from '../../src/ollama/ollama.gateway.js';
import { ManualClock } from '../support/manual-clock.js';

/** One scripted model reply; `fail` answers the call with that error instead. */
interface Scripted {
  content?: string;
  thinking?: string;
  calls?: { name: string; arguments: Record<string, unknown> | string }[];
  doneReason?: string;
  promptEvalCount?: number;
  evalCount?: number;
  fail?: OllamaError;
  /** How long the call takes by the run's clock. */
  takesMs?: number;
}

/** The model as the loop sees it: no HTTP. Records each request's messages as sent; streams content in two pieces. */
class ScriptedModel {
  readonly requests: ChatMessage[][] = [];
  constructor(
    private readonly script: Scripted[],
    private readonly clock: ManualClock,
  ) {}
  readonly gateway = {
    chat: async (request: ChatRequest): Promise<ChatReply> => {
      this.requests.push(structuredClone(request.messages));
      const next = this.script.shift() ?? { content: 'unscripted' };
      const content = next.content ?? '';
      request.onContent?.(content.slice(0, Math.ceil(content.length / 2)));
      this.clock.advance(next.takesMs ?? 0);
      if (next.fail) throw next.fail;
      request.onContent?.(content.slice(Math.ceil(content.length / 2)));
      return {
        content,
        thinking: next.thinking ?? '',
        toolCalls: (next.calls ?? []).map((call, index) => ({ id: `call_${index}`, function: { name: call.name, arguments: call.arguments as Record<string, unknown> } })),
        doneReason: next.doneReason ?? 'stop',
        promptEvalCount: next.promptEvalCount ?? 10,
        evalCount: next.evalCount ?? 5,
      };
    },
  } as unknown as OllamaGateway;
}

/** Tools in memory: each returns what `outputs` gives it; `pauseOn` names a tool that stops for a person. */
class MemoryTools implements ToolExecutor {
  readonly ran: string[] = [];
  private readonly core = new CoreToolSource({ maxSubtasks: 6, numCtx: 32_768 });
  constructor(private readonly options: { outputs?: Record<string, (args: Record<string, unknown>) => string>; pauseOn?: string } = {}) {}

  async execute(call: { function: { name: string; arguments: Record<string, unknown> } }, _context: ToolCallContext): Promise<ToolOutcome> {
    const { name, arguments: args } = call.function;
    if (name === 'plan') return { kind: 'result', result: await this.core.execute(call) };
    if (name === this.options.pauseOn) return { kind: 'pause', pause: { kind: 'approval', approvalId: 'approval-1', call, baseSha256: null } };
    this.ran.push(name);
    const output = this.options.outputs?.[name]?.(args) ?? `${name} ok`;
    return { kind: 'result', result: { output, ...(name === 'write_file' ? { change: { path: String(args.path), bytes: 3, created: true } } : {}) } };
  }
}

const TOOLS: Tool[] = [...FILE_TOOLS, COMMAND_TOOL, PLAN_TOOL];
const profile = (): ModelProfile => ({ facts: { capabilities: ['completion', 'tools'], contextLength: 40_960 }, think: undefined, toolMode: 'native', notes: [] });
const call = (name: string, args: Record<string, unknown> | string = {}): Scripted => ({ calls: [{ name, arguments: args }] });

const BUDGETS = { maxModelCalls: 200, maxToolCalls: 400, maxTokens: 4_000_000, maxWallMs: 3_600_000 };
const newState = (): RunState =>
  newRunState({ taskId: 't1', sessionId: 's1', tier: 'default', model: 'qwen3:8b', mode: 'agent', toolMode: 'native', think: undefined, budgets: BUDGETS });
const FALLBACK = { taskId: 'x', sessionId: 'x', tier: 'default', model: 'x', budgets: BUDGETS };

function harness(script: Scripted[], tools = new MemoryTools(), options: { numCtx?: number; state?: RunState } = {}) {
  const clock = new ManualClock();
  const model = new ScriptedModel(script, clock);
  const events: RunEvent[] = [];
  const config = validateConfig({ ollama: { num_ctx: options.numCtx ?? 32_768 } });
  const state = options.state ?? newState();
  const loop = new RunLoop(
    state,
    { ollama: model.gateway, executor: tools, config, events: { emit: async (event) => void events.push(event) }, clock, limits: [], inbox: null },
    {
      taskId: 't1',
      temperature: 0.7,
      tools: TOOLS,
      profile: profile(),
      signal: new AbortController().signal,
      workspace: { sessionId: 's1', paths: {} as never },
      caller: { user: 'alice', email: null, groups: [] },
    },
  );
  const start = () => {
    loop.begin([{ role: 'user', content: 'the request' }], 'SYSTEM');
    return loop.run();
  };
  const of = <T extends RunEvent['type']>(type: T) => events.filter((event): event is Extract<RunEvent, { type: T }> => event.type === type);
  return { model, events, state, loop, start, of, tools, clock };
}

const answerOf = (outcome: RunOutcome) => (outcome.kind === 'answer' ? outcome.answer : `paused: ${outcome.pause.kind}`);

/** What a client assembles from answer_delta events, applying the offset rule of run-events.ts. */
const assembled = (deltas: { offset: number; text: string }[]) => deltas.reduce((text, delta) => text.slice(0, delta.offset) + delta.text, '');

/** The run's `repair` steps, as name and detail. */
const repairSteps = (h: ReturnType<typeof harness>) =>
  h
    .of('step')
    .filter((event) => event.step.kind === 'repair')
    .map((event) => [event.step.name, event.step.detail] as const);

describe('RunLoop with a scripted model', () => {
  it("times each model call by the run's clock: startedAt when it began, durationMs until it answered", async () => {
    const h = harness([call('read_file', { path: 'a.txt' }), { content: 'done', takesMs: 1500 }]);
    h.clock.advance(60_000);
    await h.start();
    const calls = h.of('step').filter((event) => event.step.kind === 'model_call');
    expect(calls.map((event) => [event.step.startedAt, event.step.durationMs])).toEqual([
      ['2026-12-01T09:01:00.000Z', 0],
      ['2026-12-01T09:01:00.000Z', 1500],
    ]);
  });

  it('answers a request that needs no tool in exactly one model call, reporting 0/1 then 1/1', async () => {
    const h = harness([{ content: 'four', promptEvalCount: 12, evalCount: 1 }]);
    expect(answerOf(await h.start())).toBe('four');
    expect(h.model.requests).toHaveLength(1);
    expect(h.of('progress').map((event) => `${event.completedSubtasks}/${event.totalSubtasks}`)).toEqual(['0/1', '1/1']);
    expect(h.of('tokens').at(-1)).toMatchObject({ inputTokens: 12, outputTokens: 1 });
    expect(h.of('step').map((event) => `${event.step.kind}:${event.step.name}`)).toEqual(['model_call:chat']);
    expect(assembled(h.of('answer_delta'))).toBe('four');
    expect(h.of('step')[0].step).toMatchObject({ startedAt: '2026-12-01T09:00:00.000Z', durationMs: 0 });
    // One order per Task: the call's streamed deltas, then its trace step and token totals.
    expect(h.events.map((event) => event.type)).toEqual(['progress', 'status', 'answer_delta', 'answer_delta', 'step', 'tokens', 'progress']);
    expect(h.state.position.phase).toBe('done');
  });

  it('needs two model calls for one tool, and every request extends the previous one byte for byte', async () => {
    const h = harness([call('read_file', { path: 'a.txt' }), { content: 'read it' }]);
    expect(answerOf(await h.start())).toBe('read it');
    expect(h.model.requests).toHaveLength(2);
    const [first, second] = h.model.requests;
    expect(second.slice(0, first.length)).toEqual(first);
    expect(second.at(-1)).toEqual({ role: 'tool', tool_name: 'read_file', tool_call_id: 'call_0', content: 'read_file ok' });
    // The tool call's reply was not the answer: what it streamed (nothing here) is not in the assembled answer.
    expect(assembled(h.of('answer_delta'))).toBe('read it');
  });

  it('answers an unknown tool and invalid arguments with an error the model sees, then goes on', async () => {
    const h = harness([call('read_files', { path: 'a' }), call('read_file', { file: 'a' }), { content: 'done' }]);
    expect(answerOf(await h.start())).toBe('done');
    const results = h.model.requests[2].filter((message) => message.role === 'tool').map((message) => message.content);
    expect(results[0]).toMatch(/^Error: unknown tool "read_files"/);
    expect(results[1]).toMatch(/^Error: invalid arguments for read_file: missing required argument "path"; unknown argument "file"/);
    expect(h.tools.ran).toEqual([]);
  });

  it('stops after three rounds of only invalid calls', async () => {
    const h = harness([call('nope'), call('nope', { a: 1 }), call('nope', { a: 2 })]);
    await expect(h.start()).rejects.toThrow(/invalid tool calls 3 rounds in a row/);
  });

  it('recovers native tool calls whose arguments are a JSON string (the OpenAI shape)', async () => {
    expect(nativeToolCalls([{ function: { name: 'read_file', arguments: '{"path":"a.txt"}' as unknown as Record<string, unknown> } }])).toEqual([
      { function: { name: 'read_file', arguments: { path: 'a.txt' } } },
    ]);
    const h = harness([call('read_file', '{"path": "a.txt"}'), { content: 'ok' }]);
    await h.start();
    expect(h.tools.ran).toEqual(['read_file']);
    expect(h.model.requests[1].at(-1)!.content).toBe('read_file ok');
    // A repair the trace shows (npm run eval counts it), once per reply that needed it.
    expect(repairSteps(h)).toEqual([['string_arguments', { calls: 1 }]]);
  });

  it('runs a tool call the model wrote in its text, and traces the recovery as a repair step', async () => {
    const h = harness([{ content: '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>' }, { content: 'ok' }]);
    await h.start();
    expect(h.tools.ran).toEqual(['read_file']);
    expect(repairSteps(h)).toEqual([['text_tool_calls', { calls: 1 }]]);
  });

  it('pauses at a call that needs a person, stores a state that survives JSON, and resumes where it stood', async () => {
    const tools = new MemoryTools({ pauseOn: 'run_command' });
    const h = harness(
      [
        {
          calls: [
            { name: 'list_dir', arguments: {} },
            { name: 'run_command', arguments: { command: 'npm test' } },
            { name: 'glob', arguments: { pattern: '*' } },
          ],
        },
      ],
      tools,
    );
    const outcome = await h.start();
    expect(outcome).toMatchObject({ kind: 'pause', pause: { kind: 'approval', approvalId: 'approval-1' } });
    // Not the loop's to tell: AgentService emits `paused` once the pause is stored (run-waits.spec).
    expect(h.of('paused')).toEqual([]);
    expect(h.state.turn.results.map((result) => result.output)).toEqual(['list_dir ok']);
    const stored = decodeRunState(encodeRunState(h.state), FALLBACK);
    expect(stored).toEqual(JSON.parse(JSON.stringify(h.state)));

    const resumed = harness([{ content: 'tests pass' }], new MemoryTools(), { state: stored });
    expect(answerOf(await resumed.loop.resume('t2', { output: 'exit code 0\nPASS' }, null))).toBe('tests pass');
    const tail = resumed.model.requests[0].slice(-3).map((message) => `${message.tool_name}: ${message.content.split('\n')[0]}`);
    expect(tail).toEqual([
      'list_dir: list_dir ok',
      'run_command: exit code 0',
      'glob: Not run: an earlier call of this turn waited for approval. Call it again if you still need it.',
    ]);
    expect(resumed.state.pause).toBeUndefined();
  });

  it('reads a resume point stored before RunState (a pending approval from before the upgrade), and refuses an unknown version', () => {
    const legacy = JSON.stringify({
      call: { function: { name: 'run_command', arguments: { command: 'ls' } } },
      baseSha256: null,
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'look', images_base64: ['iVBORw=='] },
      ],
      turnCalls: [{ function: { name: 'run_command', arguments: { command: 'ls' } } }],
      turnResults: [],
      plan: null,
      subtask: '',
    });
    const state = decodeRunState(legacy, { taskId: 't9', sessionId: 's9', tier: 'default', model: 'm', budgets: BUDGETS });
    expect(state).toMatchObject({
      version: 2,
      taskId: 't9',
      toolMode: 'native',
      plan: null,
      position: { subtask: '', phase: 'working' },
      pause: { kind: 'approval', call: { function: { name: 'run_command' } } },
    });
    expect(Buffer.isBuffer(state.messages[1].images![0])).toBe(true);
    expect(() => decodeRunState(JSON.stringify({ version: 7, messages: [] }), state)).toThrow(/format version 7 is unknown/);
    expect(() => decodeRunState('{', state)).toThrow(/not JSON/);
  });

  it('compacts old tool output once a reply shows the prompt near the context size', async () => {
    const big = { outputs: { read_file: () => 'x'.repeat(5000) } };
    const read = (n: number): Scripted => ({ ...call('read_file', { path: 'big', start_line: n }), promptEvalCount: 27_000 });
    const h = harness([read(1), read(2), read(3), read(4), read(5), read(6), { content: 'done' }], new MemoryTools(big));
    await h.start();
    const outputs = h.model.requests
      .at(-1)!
      .filter((message) => message.role === 'tool')
      .map((message) => message.content);
    expect(outputs.slice(0, 2)).toEqual(['[earlier tool output removed to save context]', '[earlier tool output removed to save context]']);
    expect(outputs.slice(2).every((output) => output.length === 5000)).toBe(true);
    // Each compaction that replaced an output is a repair step; a native model's well-formed calls need none.
    const compactions = repairSteps(h);
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions.every(([name]) => name === 'compaction')).toBe(true);
  });

  it('continues an answer cut off at the output limit, and the streamed parts join at their offsets', async () => {
    const h = harness([{ content: 'The first half, ', doneReason: 'length' }, { content: 'and the rest.' }]);
    expect(answerOf(await h.start())).toBe('The first half, and the rest.');
    expect(h.model.requests[1].at(-1)!.content).toMatch(/^Your reply was cut off at the output limit/);
    expect(h.of('answer_delta')[0].offset).toBe(0);
    expect(assembled(h.of('answer_delta'))).toBe('The first half, and the rest.');
  });

  it('withdraws streamed text when the reply turns out to carry tool calls, or the call is retried', async () => {
    const h = harness([
      { content: 'Let me look.', calls: [{ name: 'list_dir', arguments: {} }] },
      { content: 'half an answ', fail: new OllamaError('http', 'Ollama returned HTTP 500: boom', 500) },
      { content: 'the answer' },
    ]);
    expect(answerOf(await h.start())).toBe('the answer');
    const deltas = h.of('answer_delta').map(({ offset, text }) => [offset, text]);
    expect(deltas).toEqual([
      [0, 'Let me'],
      [6, ' look.'],
      [0, ''],
      [0, 'half a'],
      [0, ''],
      [0, 'the a'],
      [5, 'nswer'],
    ]);
    expect(assembled(h.of('answer_delta'))).toBe('the answer');
    expect(h.model.requests[2].at(-1)!.content).toMatch(/^Your previous response caused an error/);
  });

  it('holds back a <think> block split across chunks, and lets through text that only starts like one', async () => {
    const deltas: { offset: number; text: string }[] = [];
    const stream = new AnswerStream({ emit: async (event) => void (event.type === 'answer_delta' && deltas.push({ offset: event.offset, text: event.text })) }, 't1');
    for (const piece of ['<thi', 'nk>reason', 'ing</th', 'ink>\n\nthe ', 'answer']) stream.onContent(piece);
    stream.keep();
    for (const piece of ['<', 'b>bold</b>']) stream.onContent(piece);
    await stream.flushed();
    expect(deltas).toEqual([
      { offset: 0, text: 'the ' },
      { offset: 4, text: 'answer' },
      { offset: 10, text: '<b>bold</b>' },
    ]);
  });

  it('never streams reasoning that leaked into the content as a <think> block', async () => {
    const h = harness([{ content: '<think>hidden reasoning</think>\n\nvisible' }]);
    expect(answerOf(await h.start())).toBe('visible');
    expect(assembled(h.of('answer_delta'))).toBe('visible');
  });

  it('plans through the plan tool: subtasks in dependency order, each next instruction as the tool result, then the summary', async () => {
    const subtasks = [
      { id: 'fix', title: 'Fix', instructions: 'Apply the fix.', depends_on: ['inspect'] },
      { id: 'inspect', title: 'Inspect', instructions: 'Read the code.', depends_on: [] },
    ];
    const h = harness([
      { ...call('plan', { subtasks }), promptEvalCount: 20, evalCount: 30 },
      { ...call('read_file', { path: 'a' }), promptEvalCount: 100, evalCount: 50 },
      { ...call('plan', { done: 'inspect' }), promptEvalCount: 10, evalCount: 10 },
      { ...call('plan', { done: 'fix' }), promptEvalCount: 200, evalCount: 100 },
      { content: 'Inspected and fixed.', promptEvalCount: 300, evalCount: 40 },
    ]);
    expect(answerOf(await h.start())).toBe('Inspected and fixed.');
    expect(h.model.requests).toHaveLength(5);
    // No user turn after the request: every instruction arrived as the plan tool's result.
    for (const request of h.model.requests) expect(request.filter((message) => message.role === 'user')).toHaveLength(1);
    const toolResults = h.model.requests
      .at(-1)!
      .filter((message) => message.tool_name === 'plan')
      .map((message) => message.content.split('\n')[0]);
    expect(toolResults).toEqual([
      'Plan accepted: 2 subtasks.',
      'Subtask 2/2 (fix): Fix',
      'All subtasks are done. Write the final answer for the user: what was done, what was found, and the result of any checks. Answer in the language of the original request.',
    ]);
    expect(h.model.requests[1].at(-1)!.content).toMatch(/\nSubtask 1\/2 \(inspect\): Inspect\nRead the code\./);
    expect(h.of('progress').map((event) => `${event.completedSubtasks}/${event.totalSubtasks}${event.currentTask ? ` ${event.currentTask}` : ''}`)).toEqual([
      '0/1 ollama chat',
      '0/2 Inspect',
      '1/2',
      '1/2 Fix',
      '2/2',
      '2/2 summary',
      '2/2',
    ]);
    expect(h.of('status').map((event) => event.currentTask)).toContain('Inspect / read_file: a');
    // inspect: 150 + 20 (its done call), then fix: 300, on the critical path; '' holds the plan call and the summary.
    expect(h.state.tokens.bySubtask).toEqual({ '': 390, inspect: 170, fix: 300 });
    expect(h.of('progress').at(-1)!.criticalPathTokens).toBe(470);
  });

  it('takes a subtask finished in prose as done and gives the next instruction as a user turn', async () => {
    const subtasks = [
      { id: 'a', title: 'A', instructions: 'do a', depends_on: [] },
      { id: 'b', title: 'B', instructions: 'do b', depends_on: [] },
    ];
    const h = harness([call('plan', { subtasks }), { content: 'a done' }, { content: 'b done' }, { content: 'all done' }]);
    expect(answerOf(await h.start())).toBe('all done');
    const users = h.model.requests
      .at(-1)!
      .filter((message) => message.role === 'user')
      .map((message) => message.content.split('\n')[0]);
    expect(users).toEqual(['the request', 'Subtask 2/2 (b): B', expect.stringMatching(/^All subtasks are done/)]);
    // Subtask notes are not the answer: nothing of them reaches the answer stream.
    expect(assembled(h.of('answer_delta'))).toBe('all done');
  });

  it('refuses an unusable plan as a tool error, and a second plan while one runs', async () => {
    const cycle = [
      { id: 'a', title: 'A', instructions: 'a', depends_on: ['b'] },
      { id: 'b', title: 'B', instructions: 'b', depends_on: ['a'] },
    ];
    const h = harness([call('plan', { subtasks: cycle }), { content: 'did it directly' }]);
    expect(answerOf(await h.start())).toBe('did it directly');
    expect(h.model.requests[1].at(-1)!.content).toMatch(/^Error: the dependencies form a cycle/);
    expect(h.state.plan).toBeNull();
  });

  it('records file changes once, in the state, as file_change events', async () => {
    const h = harness([call('write_file', { path: 'a.txt', content: 'abc' }), call('write_file', { path: 'a.txt', content: 'abd' }), { content: 'written' }]);
    await h.start();
    expect(h.state.changes).toEqual({ 'a.txt': { path: 'a.txt', bytes: 3, created: true } });
    expect(h.of('file_change')).toHaveLength(2);
  });

  it('ends at the per-subtask round limit with one summary call without tools, instead of failing', async () => {
    const h = harness([...Array.from({ length: 20 }, (_, n) => call('read_file', { path: `f${n}` })), { content: 'Read 20 files; the rest is left.' }]);
    expect(await h.start()).toEqual({
      kind: 'answer',
      answer: 'Read 20 files; the rest is left.',
      stoppedBy: { limit: 'max_rounds_per_subtask', detail: '20 model calls in one subtask' },
    });
    expect(h.model.requests).toHaveLength(21);
    expect(h.model.requests[20].at(-1)!.content).toMatch(/^The task has reached its limit max_rounds_per_subtask .*Do not call any tools/);
    expect(h.of('step').filter((event) => event.step.kind === 'limit')).toHaveLength(1);
  });
});
