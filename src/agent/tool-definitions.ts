import type { Tool } from 'ollama';

/** A parameter's description only where its name and its tool's description leave something to say (each is in every prompt). */
const tool = (name: string, description: string, properties: Record<string, { type: string; description?: string }>, required: string[]): Tool => ({
  type: 'function',
  function: { name, description, parameters: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) } },
});

/**
 * The workspace tools the model may call. Few, snake_case, short descriptions: small local models
 * handle a short tool list far better than a long one. Module constants, so the tool block of the
 * prompt is byte-identical on every call (Ollama reuses its KV cache).
 */
export const FILE_TOOLS: Tool[] = [
  tool('list_dir', 'List a directory of the workspace.', { path: { type: 'string', description: 'Relative path; default "."' } }, []),
  tool(
    'read_file',
    'Read a text file, optionally only some lines.',
    {
      path: { type: 'string', description: 'Relative path' },
      start_line: { type: 'integer', description: 'First line (1-based)' },
      end_line: { type: 'integer', description: 'Last line (inclusive)' },
    },
    ['path'],
  ),
  tool('write_file', 'Create or overwrite a file with the given content.', { path: { type: 'string', description: 'Relative path' }, content: { type: 'string' } }, [
    'path',
    'content',
  ]),
  tool(
    'edit_file',
    'Replace one exact occurrence of old_text with new_text in a file.',
    {
      path: { type: 'string', description: 'Relative path' },
      old_text: { type: 'string', description: 'Exact text to replace; must occur once' },
      new_text: { type: 'string' },
    },
    ['path', 'old_text', 'new_text'],
  ),
  tool('glob', 'Find files by pattern, e.g. "src/**/*.ts".', { pattern: { type: 'string' } }, ['pattern']),
  tool('grep', 'Search file contents with a regular expression.', { pattern: { type: 'string' }, path: { type: 'string', description: 'File or directory; default "."' } }, [
    'pattern',
  ]),
];

export const COMMAND_TOOL: Tool = tool(
  'run_command',
  'Run a shell command in the workspace (no network). Returns exit code and output.',
  { command: { type: 'string', description: 'Shell command line' } },
  ['command'],
);
