import { Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { nodeSkillFiles } from '@modelcontextprotocol/server/ext/skills/node';
import type { ToolCaller } from '../agent/core/tool-source.js';
import { AppConfig } from '../config/app-config.js';
import type { ServedSkill } from '../mcp-client/mcp-server-source.js';
import { McpToolSources } from '../mcp-client/mcp-tool-sources.js';
import { OperatorSkills } from './operator-skills.js';
import { allowedFor, skillBody, type AvailableSkill, type OperatorSkill, type SkillText } from './skill.js';

const MANIFEST = 'SKILL.md';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Every skill a caller may use: the operator's folders (`skills.dirs`, each with its `allow_groups`)
 * and the skills of the connected MCP servers the caller may use (named `<server>/<name>`), sorted by
 * name. Listeners hear when the operator's list changes (the MCP surface tells its clients).
 */
@Injectable()
export class SkillsService implements OnModuleInit, OnApplicationShutdown {
  readonly operator: OperatorSkills;
  private readonly listeners = new Set<() => void>();

  constructor(
    config: AppConfig,
    private readonly mcp: McpToolSources,
  ) {
    this.operator = new OperatorSkills(config.skills.dirs, config.skills.maxBytes, () => this.listeners.forEach((listener) => listener()));
  }

  async onModuleInit(): Promise<void> {
    await this.operator.reload();
    this.operator.watch();
  }

  onApplicationShutdown(): void {
    this.operator.stop();
  }

  /** Called after the operator's skills changed; returns how to stop listening. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The operator's skills this caller may use, in name order. */
  operatorSkills(caller: { groups: string[] }): OperatorSkill[] {
    return this.operator.all.filter((skill) => allowedFor(skill.groups, caller.groups));
  }

  /** Every skill this caller may use, in name order: the prompt lists them, the `skill` tool loads them. */
  async forCaller(caller: ToolCaller): Promise<AvailableSkill[]> {
    const served = await Promise.all(this.mcp.servers.map(async (server) => ({ server, skills: await server.skills(caller) })));
    const skills = [...this.operatorSkills(caller).map(operatorSkill), ...served.flatMap(({ server, skills: list }) => serverSkills(server.name, server.allowGroups, list))];
    return skills.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

function operatorSkill(skill: OperatorSkill): AvailableSkill {
  return {
    name: skill.name,
    description: skill.description,
    origin: 'operator',
    groups: skill.groups,
    files: skill.files,
    // Only the files the catalog listed: no path the model writes reaches the disk (no `..`, no symlink).
    read: async (file) => {
      const wanted = file === null ? MANIFEST : normalizeRef(file);
      if (!skill.files.includes(wanted)) return undefined;
      const bytes = await nodeSkillFiles(skill.root).read(`${skill.folder}/${wanted}`);
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
