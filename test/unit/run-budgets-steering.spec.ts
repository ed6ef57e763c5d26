import { describe, expect, it } from '@jest/globals';
import type { AgentTask } from '../../src/agent/agent-runner.js';
import { RunLimits } from '../../src/agent/core/run-limits.js';
import { NOT_APPROVED_OUTPUT } from '../../src/approvals/approval-texts.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { OllamaError } from '../../src/ollama/ollama-error.js';
import type { ChatReply, ChatRequest } from '../../src/ollama/ollama.gateway.js';
import { buildAgent, MemoryInbox } from '../support/agent-harness.js';
import { ManualClock } from '../support/manual-clock.js';

/** Budgets and steering (issue 35) on AgentService with in-memory stores and a scripted model. */

interface Scripted extends Partial<ChatReply> {
  /** How long the call takes by the run's clock. */
  takesMs?: number;
  /** The call never answers: only its signal ends it. */
  hangs?: boolean;
}

function scriptedOllama(script: Scripted[], clock: ManualClock) {
  const chats: ChatRequest[] = [];
  const gateway = {
    model: async () => ({ capabilities: ['completion', 'tools'], contextLength: 40_960 }),
    version: async () => '0.12.10',
    chat: async (request: ChatRequest): Promise<ChatReply> => {
      const { signal, onContent: _onContent, ...sent } = request;
      chats.push(structuredClone(sent) as ChatRequest);
      const next = script.shift() ?? { content: 'unscripted' };
      clock.advance(next.takesMs ?? 0);
      if (next.hangs) {
        // As the gateway does when its request's signal fires.
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new OllamaError('aborted', 'The request was aborted.')), { once: true }));
      }
      return { content: '', thinking: '', toolCalls: [], doneReason: 'stop', promptEvalCount: 10, evalCount: 5, ...next };
    },
  };
  return { gateway, chats };
}

const read = (path: string, extra: Scripted = {}): Scripted => ({ toolCalls: [{ function: { name: 'read_file', arguments: { path } } }], ...extra });
const task = (request: string, budget: AgentTask['budget'] = null): AgentTask => ({
  id: 't1',
  sessionId: 's1',
  unattended: null,
  owner: 'alice',
  ownerGroups: [],
  ownerEmail: null,
  client: null,
  answersInPlace: false,
  surface: 'mcp-http',
  locale: null,
  mode: 'agent',
  tier: 'default',
  request,
  budget,
  temperature: 0.2,
  images: [],
  history: [],
});
const noop = async () => undefined;
const runaway = (n: number, extra: Scripted = {}) => Array.from({ length: n }, (_, index) => read(`f${index}.txt`, extra));

function setup(script: Scripted[], budgets: Record<string, number> = {}, options: { limits?: RunLimits; inbox?: MemoryInbox; approvals?: string } = {}) {
  const clock = new ManualClock();
  const config = validateConfig({ agent: { budgets, approvals: { mode: options.approvals ?? 'never' } } });
  const ollama = scriptedOllama(script, clock);
  const agent = buildAgent(ollama.gateway, config, { clock, limits: options.limits, inbox: options.inbox });
  return { ...agent, chats: ollama.chats, clock };
}

const lastUser = (chat: ChatRequest) => chat.messages.findLast((message) => message.role === 'user')!.content;

describe('budgets end a runaway Task with a summary (issue 35)', () => {
  it.each([
    ['max_tool_calls', { max_tool_calls: 3 }, runaway(10), 4],
    ['max_model_calls', { max_model_calls: 3 }, runaway(10), 4],
    ['max_tokens', { max_tokens: 1000 }, runaway(10, { promptEvalCount: 300, evalCount: 20 }), 5],
    ['max_wall_ms', { max_wall_ms: 3_600_000 }, runaway(10, { takesMs: 25 * 60_000 }), 4],
  ])('%s: no more tools, one summary call, and the Task completes with it', async (limit, budgets, script, calls) => {
    const h = setup([...script.slice(0, calls - 1), { content: 'Read some files; the rest is left.' }], budgets);
    const outcome = await h.service.run(task('read every file'), noop, new AbortController().signal);
    expect(outcome).toMatchObject({ result: 'Read some files; the rest is left.', progress: { stoppedBy: limit } });
    expect(h.chats).toHaveLength(calls);
    const summary = h.chats.at(-1)!;
    expect(summary.tools ?? []).toEqual([]);
    // The instruction is the last message: after the turn's results (each call answered), never inside the turn.
    expect(summary.messages.at(-1)!.content).toMatch(new RegExp(`^The task has reached its limit ${limit} .*Do not call any tools`));
    const asked = summary.messages.filter((message) => message.role === 'assistant').flatMap((message) => message.tool_calls ?? []).length;
    expect(summary.messages.filter((message) => message.role === 'tool')).toHaveLength(asked);
    expect(h.toolbox.ran.length).toBeLessThan(calls);
  });

  it('cuts off a model call in flight at max_wall_ms, then asks for the summary', async () => {
    const h = setup([{ hangs: true }, { content: 'Nothing was done in time.' }], { max_wall_ms: 1000 });
    const outcome = await h.service.run(task('think long'), noop, new AbortController().signal);
    expect(outcome).toMatchObject({ result: 'Nothing was done in time.', progress: { stoppedBy: 'max_wall_ms' } });
    expect(h.chats).toHaveLength(2);
  });

  it("takes a request's lower budget, never a higher one", async () => {
    const low = setup([...runaway(5), { content: 'summary' }]);
    await expect(low.service.run(task('go', { maxToolCalls: 2 }), noop, new AbortController().signal)).resolves.toMatchObject({ progress: { stoppedBy: 'max_tool_calls' } });
    expect(low.toolbox.ran).toHaveLength(2);
    const high = setup([...runaway(3), { content: 'summary' }], { max_tool_calls: 2 });
    await expect(high.service.run(task('go', { maxToolCalls: 50 }), noop, new AbortController().signal)).resolves.toMatchObject({ progress: { stoppedBy: 'max_tool_calls' } });
    expect(high.toolbox.ran).toHaveLength(2);
  });

  it('stops at a limit another module registered (a daily token quota), without a change to the loop', async () => {
    const limits = new RunLimits();
    const spentToday = 9_950;
    limits.register({
      id: 'daily_tokens',
      forRun: () => ({ check: (usage) => (spentToday + usage.tokens >= 10_000 ? { limit: 'daily_tokens', detail: `${spentToday + usage.tokens} tokens today` } : null) }),
    });
    // 35 tokens a call: the quota is reached after the second.
    const h = setup([...runaway(2, { promptEvalCount: 30, evalCount: 5 }), { content: 'Stopped for today.' }], {}, { limits });
    const outcome = await h.service.run(task('go'), noop, new AbortController().signal);
    expect(outcome).toMatchObject({ result: 'Stopped for today.', progress: { stoppedBy: 'daily_tokens' } });
    expect(h.chats).toHaveLength(3);
    expect(() => limits.register({ id: 'daily_tokens', forRun: () => ({ check: () => null }) })).toThrow(/already registered/);
  });
});

describe('steering a running Task (issue 35)', () => {
  it('gives a correction to the model at the next step boundary, and the rest of the turn is not run', async () => {
    const inbox = new MemoryInbox();
    const h = setup([{ toolCalls: [read('a.txt').toolCalls![0], read('b.txt').toolCalls![0]] }, { content: 'Read c.txt instead.' }], {}, { inbox });
    // The correction arrives while the first call runs.
    const run = h.toolbox.execute.bind(h.toolbox);
    h.toolbox.execute = async (call) => {
      inbox.send('not b.txt, read c.txt');
      return run(call);
    };
    const outcome = await h.service.run(task('read a and b'), noop, new AbortController().signal);
    expect(outcome.result).toBe('Read c.txt instead.');
    expect(h.toolbox.ran.map((call) => call.function.arguments.path)).toEqual(['a.txt']);
    const second = h.chats[1].messages;
    expect(second.slice(-3).map((message) => `${message.role}: ${message.content.split('\n')[0]}`)).toEqual([
      'tool: read_file ok',
      'tool: Not run: the user sent a correction (next message). Call it again if it still applies.',
      'user: Correction from the user while you work:',
    ]);
    expect(second.at(-1)!.content).toMatch(/not b\.txt, read c\.txt$/);
    expect(h.events.filter((event) => event.type === 'steered')).toEqual([{ type: 'steered', taskId: 't1', count: 1 }]);
    expect(inbox.closed()).toBe(true);
  });

  it('does not end on an answer written while a correction arrived: the model reads it and answers again', async () => {
    const inbox = new MemoryInbox();
    const h = setup([{ content: 'Here is the summary.' }, { content: 'Here is the summary, in French.' }], {}, { inbox });
    let calls = 0;
    const chat = h.service['ollama'].chat.bind(h.service['ollama']);
    h.service['ollama'].chat = async (request: ChatRequest) => {
      if (calls++ === 0) inbox.send('in French, please');
      return chat(request);
    };
    const outcome = await h.service.run(task('summarise'), noop, new AbortController().signal);
    expect(outcome.result).toBe('Here is the summary, in French.');
    expect(lastUser(h.chats[1])).toMatch(/in French, please$/);
    // Closed once the last answer was final: a later correction is refused (the intake queues it as a follow-up Task).
    expect(inbox.send('too late')).toBe(false);
  });

  it('keeps a correction that arrives while the run waits for a person, and gives it to the model when the wait ends', async () => {
    const inbox = new MemoryInbox();
    const h = setup(
      [{ toolCalls: [{ function: { name: 'run_command', arguments: { command: 'npm test' } } }] }, { content: 'Tests pass; noted.' }, { content: 'Tests pass; typed too.' }],
      {},
      { inbox, approvals: 'commands' },
    );
    const draft = h.approvals.draft.bind(h.approvals);
    h.approvals.draft = (input) => {
      const drafted = draft(input);
      inbox.send('also run the linter');
      return drafted;
    };
    const paused = await h.service.run(task('run the tests'), noop, new AbortController().signal);
    expect(paused.result).toMatch(/npm test/);
    // The correction answered nothing: the approval is still pending, and the correction is in the stored state.
    expect(h.approvalRows.rows[0].state).toBe('pending');
    expect(JSON.parse(h.waits.rows[0].resume!).steering.pending).toEqual([expect.objectContaining({ text: 'also run the linter' })]);
    // The answering Task t2 gets a correction of its own during its first call: its inbox counts from 0 (not the 1 t1 took).
    const chat = h.service['ollama'].chat.bind(h.service['ollama']);
    h.service['ollama'].chat = async (request: ChatRequest) => {
      if (h.chats.length === 1) inbox.send('and the type check', 't2');
      return chat(request);
    };
    const resumed = await h.service.run({ ...task('approve'), id: 't2' }, noop, new AbortController().signal);
    expect(resumed.result).toBe('Tests pass; typed too.');
    const messages = h.chats[1].messages;
    expect(messages.slice(-2).map((message) => message.role)).toEqual(['tool', 'user']);
    expect(messages.at(-2)!.content).toBe('run_command ok');
    expect(messages.at(-1)!.content).toMatch(/also run the linter$/);
    expect(h.chats[2].messages.at(-1)!.content).toMatch(/and the type check$/);
  });
});

describe('a correction kept for a Task paused end-and-resume (issue 35)', () => {
  it('answers nothing; the Task that takes the answer gives it to the model after the answer’s result', async () => {
    const inbox = new MemoryInbox();
    const h = setup(
      [{ toolCalls: [{ function: { name: 'run_command', arguments: { command: 'npm test' } } }] }, { content: 'Tests pass; linted too.' }],
      {},
      { inbox, approvals: 'commands' },
    );
    const paused = await h.service.run(task('run the tests'), noop, new AbortController().signal);
    expect(paused.result).toMatch(/npm test/);
    // t1 ended paused; the intake keeps the correction with it (ConversationIntake 'kept'), and the approval stays pending.
    expect(inbox.closed('t1')).toBe(true);
    inbox.keep('also run the linter', 't1');
    expect(h.approvalRows.rows[0].state).toBe('pending');
    const resumed = await h.service.run({ ...task('approve'), id: 't2' }, noop, new AbortController().signal);
    expect(resumed.result).toBe('Tests pass; linted too.');
    expect(h.approvalRows.rows[0].state).toBe('granted');
    const messages = h.chats[1].messages;
    expect(messages.slice(-2).map((message) => `${message.role}: ${message.content.split('\n').at(-1)}`)).toEqual(['tool: run_command ok', 'user: also run the linter']);
  });
});

describe('a kept correction whose wait is never answered (issue 35)', () => {
  const droppedSteps = (h: ReturnType<typeof setup>) =>
    h.events.flatMap((event) => (event.type === 'step' && event.step.kind === 'steer' && event.step.outcome === 'dropped' ? [event.step] : []));

  it('is dropped when the request it was kept for has no stored pause (a new request ends it), and the new Task’s trace says so', async () => {
    const inbox = new MemoryInbox();
    const h = setup([{ toolCalls: [{ function: { name: 'run_command', arguments: { command: 'npm test' } } }] }, { content: 'Hello.' }], {}, { inbox, approvals: 'commands' });
    await h.service.run(task('run the tests'), noop, new AbortController().signal);
    inbox.keep('also run the linter', 't1');
    // The run stopped between the request and its pause: nothing can continue the wait.
    h.waits.rows.splice(0);
    expect((await h.service.run({ ...task('hello'), id: 't2' }, noop, new AbortController().signal)).result).toBe('Hello.');
    expect(h.approvalRows.rows[0].state).toBe('dropped');
    expect(inbox.dropped('t1').map((message) => message.text)).toEqual(['also run the linter']);
    expect(h.chats[1].messages.map((message) => message.content).join('\n')).not.toContain('also run the linter');
    expect(droppedSteps(h)).toEqual([
      expect.objectContaining({ taskId: 't2', name: 'correction', detail: expect.objectContaining({ count: 1, kept_for: h.approvalRows.rows[0].id, paused_task: 't1' }) }),
    ]);
  });

  it('is dropped when the Task that took the answer is cancelled before the model read it', async () => {
    const inbox = new MemoryInbox();
    const h = setup([{ toolCalls: [{ function: { name: 'run_command', arguments: { command: 'npm test' } } }] }], {}, { inbox, approvals: 'commands' });
    await h.service.run(task('run the tests'), noop, new AbortController().signal);
    inbox.keep('also run the linter', 't1');
    // The approved command runs; the person cancels the answering Task meanwhile. The sandbox kills the
    // command and answers with its result (CommandRunner's `cancelled`), as a command that ended.
    const cancel = new AbortController();
    h.toolbox.execute = async () => {
      cancel.abort(new Error('cancelled'));
      return { output: 'exit code 143 (cancelled)' };
    };
    await expect(h.service.run({ ...task('approve'), id: 't2' }, noop, cancel.signal)).rejects.toThrow('cancelled');
    expect(inbox.dropped('t1').map((message) => message.text)).toEqual(['also run the linter']);
    expect(droppedSteps(h)).toEqual([expect.objectContaining({ taskId: 't2', detail: expect.objectContaining({ paused_task: 't1' }) })]);
  });

  it('is not dropped when the wait is answered: the model reads it', async () => {
    const inbox = new MemoryInbox();
    const h = setup([{ toolCalls: [{ function: { name: 'run_command', arguments: { command: 'npm test' } } }] }, { content: 'ok' }], {}, { inbox, approvals: 'commands' });
    await h.service.run(task('run the tests'), noop, new AbortController().signal);
    inbox.keep('also run the linter', 't1');
    await h.service.run({ ...task('something else entirely'), id: 't2' }, noop, new AbortController().signal);
    // A new request ends the wait as not approved, and the run goes on: the correction is the model's.
    expect(h.approvalRows.rows[0].state).toBe('dropped');
    expect(inbox.dropped('t1')).toEqual([]);
    expect(h.chats[1].messages.slice(-3).map((message) => message.content.split('\n').at(-1))).toEqual([NOT_APPROVED_OUTPUT, 'something else entirely', 'also run the linter']);
    expect(droppedSteps(h)).toEqual([]);
  });
});

describe("one clock for a run's trace (issue 35)", () => {
  it("times the plan tool's and ask_user's steps by the run's clock, as the model calls are", async () => {
    const h = setup([
      { toolCalls: [{ function: { name: 'plan', arguments: { subtasks: ['Read the notes', 'Ask which format'] } } }] },
      { toolCalls: [{ function: { name: 'ask_user', arguments: { question: 'Which format?', options: ['Markdown', 'Plain text'] } } }] },
    ]);
    h.clock.advance(60_000);
    const paused = await h.service.run(task('Format the notes.'), noop, new AbortController().signal);
    expect(paused.result).toContain('Which format?');
    const steps = h.events.flatMap((event) => (event.type === 'step' ? [`${event.step.kind}:${event.step.name}@${event.step.startedAt}`] : []));
    expect(steps).toEqual([
      'model_call:chat@2026-12-01T09:01:00.000Z',
      'plan:plan@2026-12-01T09:01:00.000Z',
      'model_call:chat@2026-12-01T09:01:00.000Z',
      'tool_call:ask_user@2026-12-01T09:01:00.000Z',
    ]);
  });
});
