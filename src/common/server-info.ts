import { readFileSync } from 'node:fs';
import { installationFile } from './installation.js';

const manifest = JSON.parse(readFileSync(installationFile('package.json'), 'utf8')) as {
  name: string;
  version: string;
};

/** Name and version reported to MCP clients, taken from package.json. */
export const SERVER_INFO = { name: manifest.name, version: manifest.version } as const;

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
