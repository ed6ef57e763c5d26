/**
 * One tool call of a case's reference solution, with its arguments: a workspace tool of the agent (read_file,
 * write_file, edit_file, list_dir, grep, run_command) or a tool of the eval's MCP servers as the model sees it
 * (`eval-orders__lookup_order`, eval-tools.ts).
 */
export interface ReferenceStep {
  tool: string;
  args: Record<string, string>;
}

/**
 * What must hold after the agent's turn; every check of a case must pass.
 * - `command`: a shell command run in the case's workspace exits 0 (a test suite).
 * - `script`: a Node program, kept outside the workspace so the agent cannot edit it, run with the workspace
 *   as its working directory; exit 0 passes.
 * - `file`: the file's content (trailing white space aside) equals `equals` or matches `matches`; `absent`: no such file.
 * - `unchanged`: the fixture's file is byte for byte as it was (the agent was told not to touch it).
 * - `answer`: the final answer matches.
 */
export type Check = { command: string } | { script: string } | { file: string; equals?: string; matches?: RegExp; absent?: true } | { unchanged: string } | { answer: RegExp };

/** The checks of a case with a test suite: `node test.mjs` passes, and test.mjs is as the fixture had it. */
export const TEST_PASSES: Check[] = [{ command: 'node test.mjs' }, { unchanged: 'test.mjs' }];

/**
 * The opening of a `script` check: node's assert, and the workspace's `file` imported as `binding` (the script runs
 * with the workspace as its working directory).
 */
export const importing = (binding: string, file: string) =>
  `import assert from 'node:assert/strict';\nimport { pathToFileURL } from 'node:url';\nconst ${binding} = await import(pathToFileURL(process.cwd() + '/${file}').href);\n`;

export interface EvalCase {
  id: string;
  /** Which kind of work from issue 41's list it stands for. */
  kind: string;
  /** The workspace fixture: relative path to content. */
  files: Record<string, string>;
  request: string;
  checks: Check[];
  /** The reference solution: the tool calls a competent agent makes, in order, then its final answer. */
  reference: { steps: ReferenceStep[]; answer: string };
  /** false for a case a model can solve from its own knowledge, without a tool. */
  needsTools: boolean;
  /**
   * `deny`: the case's tool asks a person first, and the eval answers with deny (through the service: `deny` in the
   * session's next agent_run; the bare loop refuses the call itself); the case fails if nothing asked.
   */
  approval?: 'deny';
}

/** The Ollama the eval talks to: the configured one (ollama.host and ollama.headers of agent.yaml). */
export interface OllamaTarget {
  host: string;
  headers: Record<string, string>;
}
