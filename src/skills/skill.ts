import type { Skill as SkillEntry } from '@modelcontextprotocol/server/ext/skills';

/** Where a skill comes from: an operator folder, a connected MCP server, or the session's own workspace. */
export type SkillOrigin = 'operator' | 'mcp' | 'workspace';

/** One skill as the agent and the console see it: what the prompt lists, and how to read it. */
export interface AvailableSkill {
  /** As the model names it: `<name>` (operator, workspace) or `<server>/<name>` (an MCP server's). */
  name: string;
  description: string;
  origin: SkillOrigin;
  /** Groups whose members may use it; empty: everyone. */
  groups: string[];
  /** The files beside SKILL.md, as paths relative to the skill's folder (`references/GUIDE.md`). */
  files: string[];
  /**
   * The skill's instructions (SKILL.md without its front matter), or one of its files; undefined when
   * the file is not one of the skill's.
   */
  read(file: string | null, signal?: AbortSignal): Promise<SkillText | undefined>;
}

export interface SkillText {
  text: string;
  /** The file's size in bytes, as read. */
  bytes: number;
}

/** The SDK's entry (SEP-2640) of an operator skill, with where its files are on disk. */
export interface OperatorSkill {
  entry: SkillEntry;
  name: string;
  description: string;
  /** The folder of skill folders (`skills.dirs` entry) it was read from. */
  root: string;
  /** Its folder, relative to `root` (`release` or `team/release`). */
  folder: string;
  groups: string[];
  /** Files of the skill relative to its folder, SKILL.md first. */
  files: string[];
}

/** Text someone else wrote, on one line: control characters and line breaks become spaces (a prompt line, a log line). */
export const oneLine = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s]+/g, ' ').trim();

/** Callers in none of `groups` do not see the skill; an empty list lets everyone. */
export const allowedFor = (groups: string[], callerGroups: string[]) => groups.length === 0 || callerGroups.some((group) => groups.includes(group));

/**
 * The Markdown after SKILL.md's front matter (BOM and the `---` fence lines removed). The front matter
 * itself was parsed and checked by the SDK's catalog when the skill was loaded.
 */
export function skillBody(markdown: string): string {
  const match = /^\uFEFF?---[ \t]*\r?\n[\s\S]*?\r?\n---[ \t]*(?:\r?\n|$)/.exec(markdown);
  return (match ? markdown.slice(match[0].length) : markdown).replace(/^\s*\n/, '');
}
