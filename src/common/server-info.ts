import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

/** Name and version reported to MCP clients, taken from package.json (same path from src/ and dist/). */
export const SERVER_INFO = { name: manifest.name, version: manifest.version } as const;

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
