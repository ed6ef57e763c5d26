import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

/** Name and version reported to MCP clients, taken from package.json (same path from src/ and dist/). */
export const SERVER_INFO = { name: manifest.name, version: manifest.version } as const;

/** The modern protocol revision; the SDK keeps it out of its public constants, so it is named here. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
