import { describe, expect, it } from '@jest/globals';
import type { AgentTask } from '../../src/agent/agent-runner.js';
import { TEXT_TOOL_MARKER } from '../../src/agent/text-tool-protocol.js';
import { COMMAND_TOOL } from '../../src/agent/tool-definitions.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { OllamaError } from '../../src/ollama/ollama-error.js';
import type { ChatReply, ChatRequest, ModelFacts } from '../../src/ollama/ollama.gateway.js';
import { buildAgent } from '../support/agent-harness.js';

/**
 * Issue 35's two probable bugs, found by reading and reproduced here at the service level with
 * in-memory stores: a pause and its answer are two Tasks, so only what the stored RunState holds survives.
 */

const FACTS: Record<string, ModelFacts> = {
  'qwen3:8b': { capabilities: ['completion', 'tools'], contextLength: 40_960 },
  'qwen3:32b': { capabilities: ['completion', 'tools', 'thinking'], contextLength: 40_960 },
};

type Scripted = Partial<ChatReply> | OllamaError;

function task(id: string, request: string, tier = 'default'): AgentTask {
  return {
    id,
    sessionId: 's1',
    owner: 'alice',
    unattended: null,
    ownerGroups: [],
    ownerEmail: null,
    client: null,
    answersInPlace: false,
    mode: 'agent',
    tier,
    request,
    budget: null,
    temperature: 0.2,
    images: [],
    history: [],
  };
}

/**
 * Ollama as the agent sees it. `refusesTools`: a model whose template has no tool support although its
 * capabilities say `tools` (a custom tag hides it, continue#11402): every request that sends tools is
 * answered 400 "does not support tools", as Ollama 0.12 does, before any reply is used.
 */
function scriptedOllama(script: Scripted[], options: { refusesTools?: boolean } = {}) {
  const chats: ChatRequest[] = [];
  const asked: string[] = [];
  const gateway = {
    model: async (_signal: AbortSignal, name: string) => {
      asked.push(name);
      return FACTS[name];
    },
    version: async () => '0.12.10',
    chat: async (request: ChatRequest): Promise<ChatReply> => {
      const { signal: _signal, onContent: _onContent, ...sent } = request;
      chats.push(structuredClone(sent) as ChatRequest);
      if (options.refusesTools && (request.tools ?? []).length > 0) throw new OllamaError('no_tools', `registry.ollama.ai/library/${request.model} does not support tools`);
      const next = script.shift() ?? { content: 'unscripted' };
      if (next instanceof OllamaError) throw next;
      return { content: '', thinking: '', toolCalls: [], doneReason: 'stop', promptEvalCount: 10, evalCount: 5, ...next };
    },
  };
  return { gateway, chats, asked };
}

const runCommand = (command: string) => `<tool_call>{"name": "run_command", "arguments": {"command": "${command}"}}</tool_call>`;
const noop = async () => undefined;

describe('a paused run continued by the next Task (issue 35)', () => {
  it('stays in the text tool protocol it switched to before the pause, with its instructions once', async () => {
    const config = validateConfig({ agent: { approvals: { mode: 'commands' } } });
    const ollama = scriptedOllama([{ content: runCommand('npm test') }, { content: 'The tests pass.' }], { refusesTools: true });
    const agent = buildAgent(ollama.gateway, config);
    const paused = await agent.service.run(task('t1', 'run the tests'), noop, new AbortController().signal);
    expect(paused.result).toMatch(/npm test/);
    const answered = await agent.service.run(task('t2', 'approve'), noop, new AbortController().signal);
    expect(answered.result).toBe('The tests pass.');
    // One refused request, then the text protocol for the rest of the run, across the pause.
    expect(ollama.chats.map((chat) => (chat.tools ?? []).length > 0)).toEqual([true, false, false]);
    expect(ollama.chats.at(-1)!.messages[0].content.split(TEXT_TOOL_MARKER)).toHaveLength(2);
  });

  it('continues on the model it stopped on, with that model’s profile, when a Task of another tier answers', async () => {
    const config = validateConfig({ ollama: { model: 'qwen3:8b', models: { deep: 'qwen3:32b' } }, agent: { approvals: { mode: 'commands' } } });
    const ollama = scriptedOllama([{ toolCalls: [{ function: { name: COMMAND_TOOL.function.name!, arguments: { command: 'npm test' } } }] }, { content: 'done' }]);
    const agent = buildAgent(ollama.gateway, config);
    await agent.service.run(task('t1', 'run the tests'), noop, new AbortController().signal);
    await agent.service.run(task('t2', 'approve', 'deep'), noop, new AbortController().signal);
    const resumed = ollama.chats[1];
    expect(resumed.model).toBe('qwen3:8b');
    // qwen3:8b has no thinking capability: think is not sent to it (the deep tier's model would think).
    expect(resumed.think).toBeUndefined();
    expect(ollama.asked.at(-1)).toBe('qwen3:8b');
  });
});
