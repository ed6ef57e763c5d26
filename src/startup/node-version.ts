/**
 * The Node.js floor: package.json's engines, and those of better-sqlite3, typeorm and @nestjs/*
 * (">=20.19.0"). Each entry point imports this module first, so an older Node stops with one line
 * instead of failing somewhere inside a dependency.
 */
export const NODE_FLOOR = '20.19.0';

/** The problem with running on `version` (e.g. `18.20.4`), or null when it meets the floor. */
export function nodeVersionProblem(version: string): string | null {
  const current = version.replace(/^v/, '').split('.').map(Number);
  const floor = NODE_FLOOR.split('.').map(Number);
  const differs = floor.findIndex((part, index) => current[index] !== part);
  if (differs === -1 || current[differs] > floor[differs]) return null;
  return `Node.js ${NODE_FLOOR} or later is required (this is ${version})`;
}

const problem = nodeVersionProblem(process.versions.node);
if (problem) {
  process.stderr.write(`ollama-agent-mcp: ${problem}\n`);
  process.exit(1);
}
