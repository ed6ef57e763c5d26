import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama, type Message, type Tool } from 'ollama';
import { z } from 'zod';
import { COMMAND_TOOL, FILE_TOOLS } from '../agent/tool-definitions.js';
import { WorkspacePaths } from '../workspace/workspace-paths.js';
import type { EvalCase, OllamaTarget } from './case.js';
import { EVAL_SERVERS, mcpToolName, type EvalTool } from './eval-tools.js';
import { NO_REPAIRS, type CaseOutcome } from './report.js';
import { FILES, shell, verify, writeFixture, type EvalSandbox } from './workspace.js';

/** The bare loop's own bound on rounds, as generous as the service's per-subtask default. */
const MAX_ROUNDS = 20;
export const SEED = 42;

/** The eval's MCP tools by the names the service gives them, with whether a call needs a person's approval. */
const MCP_TOOLS = new Map<string, { tool: EvalTool; asks: boolean }>(
  Object.entries(EVAL_SERVERS).flatMap(([server, spec]) => spec.tools.map((tool) => [mcpToolName(server, tool.name), { tool, asks: spec.approval === 'always' }] as const)),
);
const MCP_DEFINITIONS: Tool[] = [...MCP_TOOLS].map(([name, { tool }]) => ({
  type: 'function',
  function: { name, description: tool.description, parameters: z.toJSONSchema(tool.input) as Tool['function']['parameters'] },
}));
/** What the bare loop answers a call that needs approval: the eval denies every one, on both paths. */
const DENIED = 'error: the user denied this call; it was not run';

/**
 * `--baseline`: the same case through a bare Ollama tool loop with the `ollama` client, what a minimal harness
 * does: the service's tool definitions and the eval's MCP tools (called in process) as native tools, the model's
 * `tool_calls` executed as they come, no planning, no text-protocol parsing, no argument repair, no continuation,
 * no retry. Its commands run in the service's sandbox, in a temporary copy of the fixture.
 */
export async function runBaseline(item: EvalCase, ollama: OllamaTarget, model: string, timeoutMs: number, sandbox: EvalSandbox): Promise<CaseOutcome> {
  const dir = mkdtempSync(join(tmpdir(), 'oam-eval-baseline-'));
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const started = performance.now();
  const outcome: CaseOutcome = {
    passed: false,
    failed: [],
    modelCalls: 0,
    promptTokens: 0,
    outputTokens: 0,
    wallMs: 0,
    repairs: { ...NO_REPAIRS },
  };
  try {
    writeFixture(dir, item);
    const paths = await WorkspacePaths.open(dir);
    const client = new Ollama({ host: ollama.host, headers: ollama.headers, fetch: (input, init) => fetch(input, { ...init, signal: abort.signal }) });
    const messages: Message[] = [{ role: 'user', content: item.request }];
    let answer = '';
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const reply = await client.chat({ model, messages, tools: [...FILE_TOOLS, COMMAND_TOOL, ...MCP_DEFINITIONS], stream: false, options: { temperature: 0, seed: SEED } });
      outcome.modelCalls++;
      outcome.promptTokens += reply.prompt_eval_count ?? 0;
      outcome.outputTokens += reply.eval_count ?? 0;
      messages.push(reply.message);
      const calls = reply.message.tool_calls ?? [];
      if (calls.length === 0) {
        answer = reply.message.content;
        break;
      }
      for (const call of calls) messages.push({ role: 'tool', tool_name: call.function.name, content: await execute(paths, call.function.name, call.function.arguments, sandbox) });
    }
    outcome.failed = await verify(item, dir, answer, sandbox);
  } catch (error) {
    outcome.failed = [abort.signal.aborted ? `no end within ${timeoutMs} ms` : `bare loop failed: ${(error as Error).message}`];
  } finally {
    clearTimeout(timer);
    outcome.wallMs = Math.round(performance.now() - started);
    rmSync(dir, { recursive: true, force: true });
  }
  outcome.passed = outcome.failed.length === 0;
  return outcome;
}

/**
 * One tool call, as plainly as it can be done; an error goes back to the model as the result. Files are read and
 * written by the service's own file tools (read whole, listed as the service lists): a link or FIFO the model's
 * commands left is neither followed out of the workspace nor waited on.
 */
async function execute(paths: WorkspacePaths, name: string, args: Record<string, unknown>, sandbox: EvalSandbox): Promise<string> {
  const dir = paths.root;
  const text = (key: string) => {
    const value = args[key];
    return typeof value === 'string' ? value : '';
  };
  const mcp = MCP_TOOLS.get(name);
  if (mcp) return mcp.asks ? DENIED : mcp.tool.run(Object.fromEntries(Object.keys(args).map((key) => [key, text(key)])));
  try {
    switch (name) {
      case 'read_file':
        return await FILES.readText(paths, text('path'));
      case 'write_file':
        await FILES.writeFile(paths, text('path'), text('content'));
        return 'written';
      case 'edit_file':
        await FILES.editFile(paths, text('path'), text('old_text'), text('new_text'));
        return 'edited';
      case 'list_dir':
        return await FILES.listDir(paths, text('path') || '.');
      case 'glob':
      case 'grep': {
        const pattern = JSON.stringify(text('pattern'));
        const command = name === 'grep' ? `grep -rnE ${pattern} ${JSON.stringify(text('path') || '.')}` : `find . -path ${JSON.stringify(`./${text('pattern')}`)}`;
        return (await shell(command, dir, sandbox)).output;
      }
      case 'run_command': {
        const { code, output } = await shell(text('command'), dir, sandbox);
        return `exit code ${code}\n${output}`;
      }
      default:
        return `error: unknown tool ${name}`;
    }
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}
