import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { SkillCatalog, SkillCatalogError, type SkillFiles } from '@modelcontextprotocol/server/ext/skills';
import { nodeSkillFiles } from '@modelcontextprotocol/server/ext/skills/node';
import type { ToolCaller } from '../agent/core/tool-source.js';
import { AppConfig } from '../config/app-config.js';
import type { ServedSkill } from '../mcp-client/mcp-server-source.js';
import { McpToolSources } from '../mcp-client/mcp-tool-sources.js';
import { OperatorSkills, toOperatorSkill } from './operator-skills.js';
import { allowedFor, oneLine, skillBody, type AvailableSkill, type OperatorSkill, type SkillText } from './skill.js';
import { workspaceSkillFiles } from './workspace-skill-files.js';

const MANIFEST = 'SKILL.md';
/** A session's own skills: at most this many files in one, each bounded by skills.max_bytes. */
const WORKSPACE_SKILL_FILES = 64;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Every skill a caller may use: the operator's folders (`skills.dirs`, each with its `allow_groups`),
 * the skills of the connected MCP servers the caller may use (named `<server>/<name>`), and with
 * `skills.from_workspace` the session's own `.agents/skills` (read at each run's start; never under a
 * name another skill has), sorted by name.
 */
@Injectable()
export class SkillsService implements OnModuleInit, OnApplicationShutdown {
  readonly operator: OperatorSkills;
  private readonly logger = new Logger('skills');

  constructor(
    private readonly config: AppConfig,
    private readonly mcp: McpToolSources,
  ) {
    this.operator = new OperatorSkills(config.skills.dirs, config.skills.maxBytes);
  }

  async onModuleInit(): Promise<void> {
    await this.operator.reload();
    this.operator.watch();
  }

  onApplicationShutdown(): void {
    this.operator.stop();
  }

  /** The operator's skills this caller may use, in name order. */
  operatorSkills(caller: { groups: string[] }): OperatorSkill[] {
    return this.operator.all.filter((skill) => allowedFor(skill.groups, caller.groups));
  }

  /**
   * Every skill this caller may use, in name order: the prompt lists them, the `skill` tool loads them.
   * `workspaceRoot`: the run's session workspace, for its own skills (with `skills.from_workspace`).
   */
  async forCaller(caller: ToolCaller, workspaceRoot: string | null = null): Promise<AvailableSkill[]> {
    const served = await Promise.all(this.mcp.servers.map(async (server) => ({ server, skills: await server.skills(caller) })));
    const skills = [
      ...this.operatorSkills(caller).map((skill) => fileSkill(skill, nodeSkillFiles(skill.root), 'operator')),
      ...served.flatMap(({ server, skills: list }) => serverSkills(server.name, server.allowGroups, list)),
    ];
    if (this.config.skills.fromWorkspace && workspaceRoot !== null) {
      const taken = new Set(skills.map((skill) => skill.name));
      skills.push(...(await this.workspaceSkills(workspaceRoot)).filter((skill) => !taken.has(skill.name)));
    }
    return skills.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The session's own `.agents/skills`, read through the workspace's no-link walk; none when the folder is absent or unreadable. */
  private async workspaceSkills(root: string): Promise<AvailableSkill[]> {
    const { maxBytes } = this.config.skills;
    const files = workspaceSkillFiles(root, maxBytes);
    const onWarning = (warning: { path: string; message: string }) =>
      this.logger.warn(`skipped workspace skill ${JSON.stringify(warning.path)} in ${root}: ${oneLine(warning.message)}`);
    try {
      const limits = { files: WORKSPACE_SKILL_FILES, bytes: WORKSPACE_SKILL_FILES * maxBytes };
      const catalog = await SkillCatalog.load(files, { onWarning, pageSize: Infinity, limits });
      return catalog.entries.map((entry) => fileSkill(toOperatorSkill(entry, { path: root, groups: [] }), files, 'workspace'));
    } catch (error) {
      if (!(error instanceof SkillCatalogError)) throw error;
      // No .agents/skills is the usual case: nothing to say.
      const absent = error.problems.every((problem) => problem.path === '.' && problem.message.includes('ENOENT'));
      if (!absent) for (const problem of error.problems) onWarning(problem);
      return [];
    }
  }
}

/** A skill read from files (an operator folder, the session workspace) through `files`, the adapter its catalog was built on. */
function fileSkill(skill: OperatorSkill, files: SkillFiles, origin: 'operator' | 'workspace'): AvailableSkill {
  return {
    name: skill.name,
    description: skill.description,
    origin,
    groups: skill.groups,
    files: skill.files,
    // Only the files the catalog listed: no path the model writes reaches the disk (no `..`, no symlink).
    read: async (file) => {
      const wanted = file === null ? MANIFEST : normalizeRef(file);
      if (!skill.files.includes(wanted)) return undefined;
      const bytes = await files.read(`${skill.folder}/${wanted}`);
      const text = textOf(bytes);
      return { text: wanted === MANIFEST ? skillBody(text) : text, bytes: bytes.byteLength };
    },
  };
}

/** A server's skills under `<server>/<name>`; two of one server with the same name are told apart by `~2`, `~3` in URI order. */
function serverSkills(server: string, groups: string[], skills: ServedSkill[]): AvailableSkill[] {
  const seen = new Map<string, number>();
  return [...skills]
    .sort((a, b) => (a.entry.uri < b.entry.uri ? -1 : 1))
    .map((served) => {
      const { entry } = served;
      const count = (seen.get(entry.frontmatter.name) ?? 0) + 1;
      seen.set(entry.frontmatter.name, count);
      const root = entry.uri.slice(0, -`/${MANIFEST}`.length);
      const files = entry.resources === 'dynamic' ? [] : entry.resources.map((resource) => resource.uri.slice(root.length + 1));
      return {
        name: `${server}/${entry.frontmatter.name}${count > 1 ? `~${count}` : ''}`,
        description: entry.frontmatter.description,
        origin: 'mcp' as const,
        groups,
        files,
        read: async (file: string | null, signal?: AbortSignal): Promise<SkillText | undefined> => {
          const wanted = file === null ? MANIFEST : normalizeRef(file);
          if (entry.resources !== 'dynamic' && !files.includes(wanted)) return undefined;
          const got = await served.read(wanted === MANIFEST ? undefined : wanted, signal);
          return { text: got.body ?? got.text ?? textOf(got.bytes), bytes: got.bytes.byteLength };
        },
      };
    });
}

/** `./references/a.md` and `references//a.md` name `references/a.md`. */
const normalizeRef = (file: string) =>
  file
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/');

/** A text file as text; anything else is named, never sent to the model as bytes. */
function textOf(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    return `[a binary file of ${bytes.byteLength} bytes: it cannot be shown as text]`;
  }
}
