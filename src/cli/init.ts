import '../startup/node-version.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { installationFile } from '../common/installation.js';
import { starterPlaces } from '../config/user-folders.js';
import { errnoReason } from '../startup/startup-error.js';
import { starterConfig, starterFolders } from '../startup/starter-config.js';

/**
 * `ollama-agent-mcp init`: writes a starter agent.yaml where the service looks for one (AGENT_CONFIG when set,
 * else the user's config folder), with its data in the user's data folder, and creates those folders. It never
 * overwrites a file: a configuration someone edited is theirs.
 */
function main(): void {
  const { file, data } = starterPlaces();
  const starter = starterConfig(readFileSync(installationFile('agent.yaml'), 'utf8'), data);
  // The folders first: a file naming folders that could not be made would only fail at the service's start.
  for (const folder of [...starterFolders(data), dirname(file)]) attempt(() => mkdirSync(folder, { recursive: true }), `create ${folder}`);
  // 'wx' refuses an existing file in the same call that creates it (no window between a check and the write); 0600
  // since the file is where a person puts tokens and passwords (auth.admin_token, database.url).
  attempt(() => writeFileSync(file, starter.text, { flag: 'wx', mode: 0o600 }), `write ${file}`);
  process.stdout.write(`wrote ${file}\ndata: ${data}\nnext: \`ollama pull ${starter.model}\`, then \`npx ollama-agent-mcp doctor\`\n`);
}

/** Runs `step`; a failure ends the command with one line saying what could not be done and why. */
function attempt(step: () => unknown, what: string): void {
  try {
    step();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EEXIST' ? 'it already exists (edit it, or remove it to start again)' : errnoReason(code);
    process.stderr.write(`ollama-agent-mcp: init: cannot ${what}: ${why}\n`);
    process.exit(1);
  }
}

main();
