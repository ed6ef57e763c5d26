import { homedir } from 'node:os';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { INSTALLATION } from '../common/installation.js';

const APP = 'ollama-agent-mcp';

/**
 * A folder of the XDG Base Directory specification: the variable when it is an absolute path (the specification
 * says to ignore a relative one), else its default under the home folder.
 */
function xdgFolder(env: NodeJS.ProcessEnv, variable: 'XDG_CONFIG_HOME' | 'XDG_DATA_HOME', fallback: string): string {
  const value = env[variable];
  return value && isAbsolute(value) ? value : join(env.HOME || homedir(), fallback);
}

/** The configuration file in the user's config folder: `$XDG_CONFIG_HOME/ollama-agent-mcp/agent.yaml` (default ~/.config). */
export const userConfigFile = (env: NodeJS.ProcessEnv) => join(xdgFolder(env, 'XDG_CONFIG_HOME', '.config'), APP, 'agent.yaml');

/** The user's data folder for this service: `$XDG_DATA_HOME/ollama-agent-mcp` (default ~/.local/share). */
export const userDataFolder = (env: NodeJS.ProcessEnv) => join(xdgFolder(env, 'XDG_DATA_HOME', '.local/share'), APP);

/**
 * Whether the service runs from a checkout of its repository (a clone, or an image built from one) rather than from
 * an installed package: npm installs every package (with `npx`, `-g` or into a project) inside a `node_modules`
 * folder, and a checkout is never inside one.
 */
export const runsFromClone = (installation = INSTALLATION) => !installation.split(sep).includes('node_modules');

/** Where `ollama-agent-mcp init` writes: the file AGENT_CONFIG names, else the user's config file; the data in the user's data folder. */
export function starterPlaces(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): { file: string; data: string } {
  return { file: env.AGENT_CONFIG ? resolve(cwd, env.AGENT_CONFIG) : userConfigFile(env), data: userDataFolder(env) };
}
