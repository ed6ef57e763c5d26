import { Logger } from '@nestjs/common';
import { SkillCatalog, SkillCatalogError, type Skill as SkillEntry, type SkillWarning } from '@modelcontextprotocol/server/ext/skills';
import { nodeSkillFiles } from '@modelcontextprotocol/server/ext/skills/node';
import { watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { oneLine, type OperatorSkill } from './skill.js';

/** A folder of skill folders as configured (`skills.dirs`). */
export interface SkillsDir {
  path: string;
  groups: string[];
}

/** Changes in a watched folder come in bursts (an editor writes, renames, touches): one re-read after they settle. */
const SETTLE_MS = 150;
const URI_SCHEME = 'skill://';

/**
 * The operator's skill folders (`skills.dirs`), read through the MCP SDK's skill catalog (SEP-2640),
 * which walks each folder, parses every SKILL.md's front matter, and checks the format's rules (name:
 * lowercase letters, digits and single hyphens, at most 64, the folder's name; description 1 to 1024
 * characters; no symlinks): a skill that breaks one is skipped with a warning naming its file, never
 * a failed boot. A SKILL.md over `maxBytes` is skipped the same way, and a name a folder earlier in
 * `skills.dirs` already has. Re-read when a folder changes (watched) or on `reload()`.
 */
export class OperatorSkills {
  private skills: OperatorSkill[] = [];
  private readonly watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> = Promise.resolve();
  private readonly logger = new Logger('skills');

  constructor(
    private readonly dirs: SkillsDir[],
    private readonly maxBytes: number,
  ) {}

  get all(): readonly OperatorSkill[] {
    return this.skills;
  }

  /** Reads every folder again and swaps the new list in at once; overlapping calls run one after another. */
  reload(): Promise<void> {
    this.reading = this.reading.then(() => this.read());
    return this.reading;
  }

  /** Re-reads a folder whenever something under it changes. A folder that cannot be watched is read only at boot and on reload. */
  watch(): void {
    for (const dir of this.dirs) {
      try {
        const watcher = watch(dir.path, { recursive: true, persistent: false }, () => this.changed());
        watcher.on('error', (error) => this.logger.warn(`stopped watching ${dir.path}: ${error.message}`));
        this.watchers.push(watcher);
      } catch (error) {
        this.logger.warn(`cannot watch ${dir.path} (re-read it with POST /admin/skills/reload): ${(error as Error).message}`);
      }
    }
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const watcher of this.watchers.splice(0)) watcher.close();
  }

  private changed(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.reload();
    }, SETTLE_MS);
    this.timer.unref();
  }

  private async read(): Promise<void> {
    const loaded: OperatorSkill[] = [];
    for (const dir of this.dirs) {
      for (const entry of await this.catalog(dir)) {
        const skill = toOperatorSkill(entry, dir);
        const where = join(dir.path, skill.folder, 'SKILL.md');
        const size = entry.resources === 'dynamic' ? 0 : (entry.resources.find((resource) => resource.uri === entry.uri)?.size ?? 0);
        if (size > this.maxBytes) this.warn(where, `SKILL.md is ${size} bytes, over skills.max_bytes (${this.maxBytes}) (skill skipped)`);
        else if (loaded.some((other) => other.name === skill.name)) this.warn(where, `a skill named "${skill.name}" was already read from an earlier folder (skill skipped)`);
        else loaded.push(skill);
      }
    }
    loaded.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.skills = loaded;
    if (this.dirs.length > 0) this.logger.log(`${loaded.length} skill(s) read from ${this.dirs.length} folder(s)`);
  }

  /** One folder's valid skills; a folder that cannot be read gives none (with a warning). */
  private async catalog(dir: SkillsDir): Promise<readonly SkillEntry[]> {
    const onWarning = (warning: SkillWarning) => this.warn(join(dir.path, warning.path), warning.message);
    try {
      return (await SkillCatalog.load(nodeSkillFiles(dir.path), { onWarning, pageSize: Infinity })).entries;
    } catch (error) {
      if (!(error instanceof SkillCatalogError)) throw error;
      for (const problem of error.problems) onWarning(problem);
      return [];
    }
  }

  private warn(file: string, message: string): void {
    this.logger.warn(`skipped ${JSON.stringify(file)}: ${oneLine(message)}`);
  }
}

/** A path relative to the folder of skill folders, from a `skill://` URI of the catalog (no prefix). */
export const pathOfUri = (uri: string): string =>
  uri
    .slice(URI_SCHEME.length)
    .split('/')
    .map((segment) => decodeURIComponent(segment))
    .join('/');

/** A catalog entry with where its files are: `dir` is the folder of skill folders it was read from. */
export function toOperatorSkill(entry: SkillEntry, dir: SkillsDir): OperatorSkill {
  const manifest = pathOfUri(entry.uri);
  const folder = manifest.slice(0, -'/SKILL.md'.length);
  const files = entry.resources === 'dynamic' ? [] : entry.resources.map((resource) => pathOfUri(resource.uri).slice(folder.length + 1));
  return {
    entry,
    name: entry.frontmatter.name,
    description: entry.frontmatter.description,
    root: dir.path,
    folder,
    groups: dir.groups,
    files: [...files.filter((file) => file === 'SKILL.md'), ...files.filter((file) => file !== 'SKILL.md')],
  };
}
