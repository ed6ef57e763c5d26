import type { Tool } from 'ollama';
import { cutText } from '../common/cut-text.js';
import type { ChatToolCall } from '../ollama/ollama.gateway.js';
import type { OfferedTool, ToolCallContext, ToolCaller, ToolResult, ToolSource, ToolStep } from '../agent/core/tool-source.js';
import { oneLine, type AvailableSkill } from './skill.js';

/** A description as the prompt lists it: one line, at most this long. */
export const DESCRIPTION_CHARS = 120;
/**
 * The most the listing may add to the fixed prompt (about 500 tokens, 4 characters a token): past it,
 * as past `skills.max_listed`, none is listed and find_skills is offered, so the prompt stays bounded.
 */
export const LISTING_CHARS = 2000;
const MAX_MATCHES = 8;
/** How much of a name the model wrote is echoed back in an error. */
const ECHO_CHARS = 80;

/** Module constants: the same bytes for every Task, so the prompt's tool block stays cached. */
export const SKILL_TOOL: Tool = {
  type: 'function',
  function: {
    name: 'skill',
    description: "Load a skill's instructions by its exact name; with file, a file the instructions name.",
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The skill name as listed' },
        file: { type: 'string', description: 'e.g. references/checklist.md' },
      },
      required: ['name'],
    },
  },
};

export const FIND_SKILLS: Tool = {
  type: 'function',
  function: {
    name: 'find_skills',
    description: 'Search the skills (procedures for kinds of work) by words; then load one with skill.',
    parameters: { type: 'object', properties: { query: { type: 'string', description: 'e.g. release' } }, required: ['query'] },
  },
};

export const SKILLS_HEADING = 'Skills (procedures for specific work; before doing such work, load the matching skill with the skill tool and follow it):';
export const SKILLS_SEARCH_NOTICE =
  'Skills (procedures for specific work) are available: before doing such work, search them with find_skills and load the matching one with the skill tool.';

/** What a loaded skill leaves in the trace and the audit. */
export interface SkillLoad {
  caller: ToolCaller;
  taskId: string;
  sessionId: string;
  skill: string;
  file: string | null;
  origin: AvailableSkill['origin'] | null;
  outcome: 'ok' | 'not_found' | 'error';
  bytes?: number;
  error?: string;
}

/**
 * The caller's skills as a ToolSource (`skills`): the prompt lists each (`name: description`, one
 * line, sorted) through `notices`, or past `maxListed` none and `find_skills` instead; `skill` loads one
 * skill's instructions, or a file beside them, as a tool result bounded like any tool output. One per
 * run, on the list the run started with: a skill the caller may not use is not in it, and gets the
 * same answer as one that does not exist.
 */
export class SkillToolSource implements ToolSource {
  readonly id = 'skills';

  /** Listed in the prompt, or found with find_skills: decided once per run, on the run's list. */
  private readonly listed: boolean;
  private readonly lines: string[];

  constructor(
    private readonly skills: AvailableSkill[],
    private readonly limits: { maxListed: number; outputChars: number },
    private readonly record: (load: SkillLoad) => Promise<void>,
  ) {
    this.lines = skills.map(lineOf);
    this.listed = skills.length <= limits.maxListed && this.lines.reduce((sum, line) => sum + line.length + 1, 0) <= LISTING_CHARS;
  }

  async tools(): Promise<OfferedTool[]> {
    const skill: OfferedTool = { definition: SKILL_TOOL, effect: 'read', stepKind: 'tool_call' };
    return this.listed ? [skill] : [{ definition: FIND_SKILLS, effect: 'read', stepKind: 'tool_call' }, skill];
  }

  notices(): string[] {
    if (!this.listed) return [SKILLS_SEARCH_NOTICE];
    return [SKILLS_HEADING, ...this.lines];
  }

  async execute(call: ChatToolCall, context: ToolCallContext): Promise<ToolResult> {
    const args = call.function.arguments;
    if (call.function.name === 'find_skills') {
      const output = this.search(typeof args.query === 'string' ? args.query : '');
      return { output, step: { kind: 'tool_call', outcome: 'ok', detail: { arguments: args } } };
    }
    const name = typeof args.name === 'string' ? args.name : '';
    const file = typeof args.file === 'string' && args.file.trim() !== '' && args.file !== 'SKILL.md' ? args.file : null;
    const skill = this.skills.find((candidate) => candidate.name === name);
    const finish = async (result: ToolResult, load: Omit<SkillLoad, 'caller' | 'taskId' | 'sessionId' | 'skill' | 'file' | 'origin'>) => {
      const shown = { skill: cutText(name, ECHO_CHARS), file: file === null ? null : cutText(file, ECHO_CHARS), origin: skill?.origin ?? null };
      const outcome = load.outcome === 'ok' ? 'ok' : 'error';
      // `arguments` as every tool call's step has them: the console's trace shows which skill (and file) was loaded.
      const detail = { arguments: { name: shown.skill, ...(shown.file === null ? {} : { file: shown.file }) }, ...shown, ...load };
      await this.record({ caller: context.caller, taskId: context.taskId, sessionId: context.workspace.sessionId, ...shown, ...load });
      const step: ToolStep = { kind: 'tool_call', outcome, detail };
      return { ...result, step };
    };
    const echo = JSON.stringify(cutText(name, ECHO_CHARS));
    if (!skill)
      return finish({ output: `Error: no such skill ${echo}. Use a name exactly as listed${this.listed ? '' : ' by find_skills'}.`, isError: true }, { outcome: 'not_found' });
    try {
      const read = await skill.read(file, context.signal);
      if (!read) {
        const files = skill.files.filter((candidate) => candidate !== 'SKILL.md');
        const listing = files.length > 0 ? ` Its files: ${cutText(files.join(', '), 1000)}.` : ' It has no other files.';
        return finish({ output: `Error: the skill ${echo} has no file ${JSON.stringify(cutText(file ?? '', ECHO_CHARS))}.${listing}`, isError: true }, { outcome: 'not_found' });
      }
      return finish({ output: cutText(this.framed(skill, file, read.text), this.limits.outputChars, { mark: 'chars' }) }, { outcome: 'ok', bytes: read.bytes });
    } catch (error) {
      const message = cutText((error as Error).message ?? String(error), 300);
      return finish({ output: `Error: the skill ${echo} could not be read: ${message}`, isError: true }, { outcome: 'error', error: message });
    }
  }

  /** The instructions, then the files beside them the model may load (a file as it is). */
  private framed(skill: AvailableSkill, file: string | null, text: string): string {
    if (file !== null) return text;
    const files = skill.files.filter((candidate) => candidate !== 'SKILL.md');
    return files.length === 0 ? text : `${text.trimEnd()}\n\n[Files of this skill, loaded with skill {"name": ${JSON.stringify(skill.name)}, "file": ...}: ${files.join(', ')}]`;
  }

  /** The best matches by words in common with the name and description; an empty query lists the first ones. */
  private search(query: string): string {
    const words = query
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((word) => word.length > 1);
    const matches = this.skills
      .map((skill, index) => {
        const text = `${skill.name} ${skill.description}`.toLowerCase();
        return { skill, index, score: words.reduce((sum, word) => sum + (skill.name.includes(word) ? 3 : text.includes(word) ? 1 : 0), 0) };
      })
      .filter((entry) => entry.score > 0 || words.length === 0)
      .sort((a, b) => b.score - a.score || a.index - b.index)
      .slice(0, MAX_MATCHES);
    if (matches.length === 0) return `No skill matches ${JSON.stringify(cutText(query, ECHO_CHARS))}. Try other words.`;
    return `${matches.length} skill(s); load one with skill {"name": ...}:\n${matches.map(({ skill }) => lineOf(skill)).join('\n')}`;
  }
}

/**
 * One skill as the prompt lists it: `- name: description`, on one line (control characters and line
 * breaks become spaces), the description cut to DESCRIPTION_CHARS; a workspace skill says where it is from.
 */
export function lineOf(skill: AvailableSkill): string {
  const description = cutText(oneLine(skill.description), DESCRIPTION_CHARS);
  return `- ${skill.name}: ${description}${skill.origin === 'workspace' ? ' (written in the session workspace)' : ''}`;
}
