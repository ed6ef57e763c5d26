import { join } from 'node:path';
import { parseDocument } from 'yaml';

/**
 * The agent.yaml that `ollama-agent-mcp init` writes: the installation's committed default (its keys and comments),
 * with the database and the workspace named in full inside the user's data folder. Named in full because the file
 * lives in the config folder and the data does not (XDG keeps them apart), and so that a person reading the file
 * sees where the data is.
 */
export function starterConfig(template: string, dataFolder: string): { text: string; model: string } {
  // The template's own heading speaks of the repository's copy; this file gets its own.
  const document = parseDocument(template.replace(/^(#.*\n)+/, ''));
  document.setIn(['database', 'path'], join(dataFolder, 'data', 'agent.sqlite'));
  document.setIn(['workspace', 'root'], join(dataFolder, 'workspace'));
  const text =
    '# ollama-agent-mcp configuration, written by `ollama-agent-mcp init` (keys: docs/configuration.md).\n' +
    '# AGENT_CONFIG=<path> selects another file; AGENT__SECTION__KEY=value overrides one key\n' +
    '# (e.g. AGENT__OLLAMA__MODEL=llama3.2). Unknown keys and bad values stop the process at boot.\n' +
    document.toString();
  return { text, model: String(document.getIn(['ollama', 'model'])) };
}

/** The folders a starter configuration names, which the service expects to exist (a configured workspace root must). */
export const starterFolders = (dataFolder: string) => [join(dataFolder, 'data'), join(dataFolder, 'workspace')];
