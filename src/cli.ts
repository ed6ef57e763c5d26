import { readFileSync } from 'node:fs';

/**
 * The package's bin, `ollama-agent-mcp [command]` (`npx ollama-agent-mcp stdio`): each command is one of the entry
 * points beside this file (dist/), run in this process as if started directly (`node dist/stdio.js`), so that it
 * is the same program whichever way it starts. A new command is one row here and one entry in scripts/bundle.mjs.
 * This file imports Node's built-ins only: `--help` answers at once, without loading a bundle.
 */
const COMMANDS: Record<string, { entry: string; summary: string; takesOptions?: true }> = {
  serve: { entry: 'main.js', summary: 'the HTTP service: MCP at /mcp, the console at /admin (the default)' },
  stdio: { entry: 'stdio.js', summary: 'MCP over stdio, for a client that starts the server itself' },
  doctor: { entry: 'doctor.js', summary: 'checks Ollama, the model, the sandbox and the folders, one line each' },
  init: { entry: 'init.js', summary: 'writes a starter agent.yaml in the user config folder' },
  eval: { entry: 'eval.js', summary: 'measures how well the configured model works here (--help: its options)', takesOptions: true },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const rows = Object.entries(COMMANDS).map(([name, { summary }]) => `  ${name.padEnd(width)}  ${summary}`);
  return [
    'Usage: ollama-agent-mcp [command]',
    '',
    'Commands:',
    ...rows,
    '',
    'Configuration: $AGENT_CONFIG, else ./agent.yaml, else $XDG_CONFIG_HOME/ollama-agent-mcp/agent.yaml (~/.config);',
    'AGENT__SECTION__KEY=value overrides one key. The README says more.',
    '',
  ].join('\n');
}

const [name = 'serve', ...rest] = process.argv.slice(2);
if (name === '--help' || name === '-h' || name === 'help') {
  process.stdout.write(usage());
} else if (name === '--version' || name === '-v') {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${manifest.version}\n`);
} else if (!Object.hasOwn(COMMANDS, name) || (rest.length > 0 && !COMMANDS[name].takesOptions)) {
  // Nothing runs on a command it does not know: a typo must not start a server.
  process.stderr.write(`ollama-agent-mcp: ${Object.hasOwn(COMMANDS, name) ? `${name} takes no arguments` : `unknown command ${JSON.stringify(name)}`}\n\n${usage()}`);
  process.exitCode = 2;
} else {
  // As if started directly: the entry point reads its options from argv[2] on.
  process.argv.splice(2, 1);
  await import(new URL(COMMANDS[name].entry, import.meta.url).href);
}
