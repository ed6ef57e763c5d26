// `npm start`, `npm run start:stdio`, `npm run doctor` and `npm run eval` run what `npm run build` made, without
// building each time: this says so clearly when dist/ is missing or older than the sources.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const entry = join(root, 'dist', process.argv[2] ?? 'main.js');

function newestSource(dir) {
  let newest = { path: '', mtimeMs: 0 };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const candidate = entry.isDirectory() ? newestSource(path) : entry.name.endsWith('.ts') ? { path, mtimeMs: statSync(path).mtimeMs } : newest;
    if (candidate.mtimeMs > newest.mtimeMs) newest = candidate;
  }
  return newest;
}

if (!existsSync(entry)) {
  process.stderr.write(`ollama-agent-mcp: ${entry} is missing: run \`npm run build\` once (and again after changing src/)\n`);
  process.exit(1);
}
// The bundler (scripts/bundle.mjs, the last step of every build) writes the entry points anew each time, so an
// entry's time is when the last build was.
const builtAt = statSync(entry).mtimeMs;
const source = newestSource(join(root, 'src'));
if (source.mtimeMs > builtAt) {
  process.stderr.write(`ollama-agent-mcp: dist/ is older than the sources (${source.path.slice(root.length + 1)} changed since the last build): run \`npm run build\`\n`);
  process.exit(1);
}
