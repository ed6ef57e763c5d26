import { describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { SkillCatalog } from '@modelcontextprotocol/server/ext/skills';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunEvent } from '../../src/agent/core/run-events.js';
import type { ToolCallContext, ToolResult } from '../../src/agent/core/tool-source.js';
import { OperatorSkills } from '../../src/skills/operator-skills.js';
import { skillBody, type AvailableSkill } from '../../src/skills/skill.js';
import { workspaceSkillFiles } from '../../src/skills/workspace-skill-files.js';
import {
  DESCRIPTION_CHARS,
  FIND_SKILLS,
  LISTING_CHARS,
  lineOf,
  SKILL_TOOL,
  SKILLS_HEADING,
  SKILLS_SEARCH_NOTICE,
  SkillToolSource,
  type SkillLoad,
} from '../../src/skills/skill-tool-source.js';
import { ManualClock } from '../support/manual-clock.js';

function skillFolder(root: string, folder: string, text: string, files: Record<string, string> = {}): void {
  mkdirSync(join(root, folder), { recursive: true });
  writeFileSync(join(root, folder, 'SKILL.md'), text);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, folder, path, '..'), { recursive: true });
    writeFileSync(join(root, folder, path), content);
  }
}

const manifest = (name: string, description: string, body = `${name} body\n`) => `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;

function warnings(): { messages: string[]; restore: () => void } {
  const messages: string[] = [];
  const spy = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void messages.push(String(message)));
  jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  return { messages, restore: () => spy.mockRestore() };
}

describe('OperatorSkills: the operator folders through the SDK catalog', () => {
  it('loads valid skills sorted by name and skips each bad one with a warning naming its file', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skills-unit-'));
    skillFolder(root, 'zeta', manifest('zeta', 'Last.'));
    skillFolder(root, 'alpha', manifest('alpha', 'First.'), { 'references/guide.md': 'guide' });
    skillFolder(root, 'no-front-matter', 'just text\n');
    skillFolder(root, 'wrong', manifest('other-name', 'Name differs from the folder.'));
    skillFolder(root, 'huge', manifest('huge', 'Too big.', 'x'.repeat(2000)));
    const log = warnings();
    const skills = new OperatorSkills([{ path: root, groups: [] }], 1024);
    await skills.reload();
    log.restore();
    expect(skills.all.map((skill) => skill.name)).toEqual(['alpha', 'zeta']);
    expect(skills.all[0].files).toEqual(['SKILL.md', 'references/guide.md']);
    for (const folder of ['no-front-matter', 'wrong', 'huge']) expect(log.messages.some((message) => message.includes(JSON.stringify(join(root, folder, 'SKILL.md'))))).toBe(true);
    expect(log.messages.find((message) => message.includes('huge'))).toContain('over skills.max_bytes (1024)');
  });

  it('keeps the first of two folders with the same skill name, and a missing folder is a warning, not a failure', async () => {
    const first = mkdtempSync(join(tmpdir(), 'skills-unit-'));
    const second = mkdtempSync(join(tmpdir(), 'skills-unit-'));
    skillFolder(first, 'shared', manifest('shared', 'From the first.'));
    skillFolder(second, 'shared', manifest('shared', 'From the second.'));
    const log = warnings();
    const skills = new OperatorSkills(
      [
        { path: first, groups: [] },
        { path: second, groups: ['ops'] },
        { path: join(first, 'missing'), groups: [] },
      ],
      65536,
    );
    await skills.reload();
    log.restore();
    expect(skills.all.map((skill) => [skill.name, skill.description, skill.groups])).toEqual([['shared', 'From the first.', []]]);
    expect(log.messages.some((message) => message.includes('already read from an earlier folder'))).toBe(true);
    expect(log.messages.some((message) => message.includes('cannot be listed'))).toBe(true);
  });

  it('re-reads on reload: a new skill joins, a removed one goes', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skills-unit-'));
    skillFolder(root, 'one', manifest('one', 'One.'));
    const log = warnings();
    const skills = new OperatorSkills([{ path: root, groups: [] }], 65536);
    await skills.reload();
    expect(skills.all.map((skill) => skill.name)).toEqual(['one']);
    skillFolder(root, 'two', manifest('two', 'Two.'));
    rmSync(join(root, 'one'), { recursive: true });
    await skills.reload();
    log.restore();
    expect(skills.all.map((skill) => skill.name)).toEqual(['two']);
  });
});

describe('skillBody', () => {
  it('drops the front matter and its fences, BOM and CRLF included', () => {
    expect(skillBody('---\nname: a\ndescription: b\n---\n# Title\ntext\n')).toBe('# Title\ntext\n');
    expect(skillBody('\uFEFF---\r\nname: a\r\n---\r\n\r\nBody\r\n')).toBe('Body\r\n');
  });
});

const skill = (name: string, description: string, files: Record<string, string> = {}, origin: AvailableSkill['origin'] = 'operator'): AvailableSkill => ({
  name,
  description,
  origin,
  groups: [],
  files: ['SKILL.md', ...Object.keys(files)],
  read: async (file) => {
    const text = file === null ? `${name} instructions` : files[file];
    return text === undefined ? undefined : { text, bytes: Buffer.byteLength(text) };
  },
});

function context(): { context: ToolCallContext; steps: RunEvent[] } {
  const steps: RunEvent[] = [];
  const caller = { user: 'alice', email: null, groups: ['dev'] };
  const events = { emit: async (event: RunEvent) => void steps.push(event) };
  return {
    steps,
    context: { taskId: 't1', subtask: '', signal: new AbortController().signal, workspace: { sessionId: 's1', paths: {} as never }, caller, events, clock: new ManualClock() },
  };
}

const call = (name: string, args: Record<string, unknown>) => ({ function: { name, arguments: args } });

describe('SkillToolSource', () => {
  const skills = [skill('ci-logs', 'Reading CI\nlogs.\u0007'), skill('release', 'How we release.', { 'references/list.md': 'LIST' }), skill('mine', 'Mine.', {}, 'workspace')];

  it('lists one line per skill after a heading, in the order given, each on one line and bounded', () => {
    const source = new SkillToolSource(skills, { maxListed: 20, outputChars: 1000 }, async () => undefined);
    expect(source.notices()).toEqual([SKILLS_HEADING, '- ci-logs: Reading CI logs.', '- release: How we release.', '- mine: Mine. (written in the session workspace)']);
    const long = lineOf(skill('long', 'word '.repeat(100)));
    expect(long.length).toBeLessThanOrEqual('- long: '.length + DESCRIPTION_CHARS + 1);
  });

  it('offers skill alone while listed, and find_skills with a search notice past maxListed', async () => {
    expect((await new SkillToolSource(skills, { maxListed: 3, outputChars: 1000 }, async () => undefined).tools()).map((tool) => tool.definition)).toEqual([SKILL_TOOL]);
    const many = new SkillToolSource(skills, { maxListed: 2, outputChars: 1000 }, async () => undefined);
    expect((await many.tools()).map((tool) => tool.definition)).toEqual([FIND_SKILLS, SKILL_TOOL]);
    expect(many.notices()).toEqual([SKILLS_SEARCH_NOTICE]);
    const { context: ctx } = context();
    expect((await many.execute(call('find_skills', { query: 'release' }), ctx)).output).toBe('1 skill(s); load one with skill {"name": ...}:\n- release: How we release.');
    expect((await many.execute(call('find_skills', { query: 'nothing-like-it' }), ctx)).output).toBe('No skill matches "nothing-like-it". Try other words.');
  });

  it('loads instructions and files, bounded, records each load, and answers the same for a missing and an unknown skill', async () => {
    const loads: SkillLoad[] = [];
    const source = new SkillToolSource(skills, { maxListed: 20, outputChars: 30 }, async (load) => void loads.push(load));
    const { context: ctx } = context();
    const results: ToolResult[] = [];
    const run = async (args: Record<string, unknown>) => (results.push(await source.execute(call('skill', args), ctx)), results.at(-1)!);
    expect((await run({ name: 'release' })).output).toMatch(/^release instructions\n\n\[Files o… \(\d+ chars\)$/);
    expect((await run({ name: 'release', file: 'references/list.md' })).output).toBe('LIST');
    expect(await run({ name: 'release', file: '../../etc/passwd' })).toMatchObject({
      output: 'Error: the skill "release" has no file "../../etc/passwd". Its files: references/list.md.',
      isError: true,
    });
    expect(await run({ name: 'secret' })).toMatchObject({ output: 'Error: no such skill "secret". Use a name exactly as listed.', isError: true });
    expect(await run({ name: 42 })).toMatchObject({ output: 'Error: no such skill "". Use a name exactly as listed.', isError: true });
    expect(loads.map((load) => [load.skill, load.file, load.outcome])).toEqual([
      ['release', null, 'ok'],
      ['release', 'references/list.md', 'ok'],
      ['release', '../../etc/passwd', 'not_found'],
      ['secret', null, 'not_found'],
      ['', null, 'not_found'],
    ]);
    // The step each call describes (the executor records it, timed by the run's clock).
    expect(results.map((result) => `${result.step?.kind}:${result.step?.outcome}`)).toEqual([
      'tool_call:ok',
      'tool_call:ok',
      'tool_call:error',
      'tool_call:error',
      'tool_call:error',
    ]);
  });

  it('turns a read that fails into a tool error, not an exception', async () => {
    const failing: AvailableSkill = { ...skill('gone', 'Gone.'), read: async () => Promise.reject(new Error('ENOENT: no such file')) };
    const source = new SkillToolSource([failing], { maxListed: 20, outputChars: 1000 }, async () => undefined);
    expect(await source.execute(call('skill', { name: 'gone' }), context().context)).toMatchObject({
      output: 'Error: the skill "gone" could not be read: ENOENT: no such file',
      isError: true,
    });
  });
});

describe("the skills' share of the fixed prompt", () => {
  it('is bounded whatever the skills: past the listing budget none is listed and find_skills is offered', () => {
    const many = Array.from({ length: 30 }, (_, index) => skill(`skill-${'x'.repeat(50)}-${index}`, 'd'.repeat(500)));
    const listed = new SkillToolSource(many.slice(0, 12), { maxListed: 100, outputChars: 1000 }, async () => undefined);
    expect(listed.notices()).toEqual([SKILLS_SEARCH_NOTICE]);
    const few = new SkillToolSource(many.slice(0, 5), { maxListed: 100, outputChars: 1000 }, async () => undefined);
    expect(few.notices().join('\n').length).toBeLessThanOrEqual(SKILLS_HEADING.length + 1 + LISTING_CHARS);
    // The tool definitions a run with skills adds (4 characters a token): skill alone, or with find_skills past the listing.
    expect(Math.ceil(JSON.stringify([SKILL_TOOL]).length / 4)).toBeLessThanOrEqual(90);
    expect(Math.ceil(JSON.stringify([FIND_SKILLS, SKILL_TOOL]).length / 4)).toBeLessThanOrEqual(160);
  });
});

describe("workspaceSkillFiles: a session's own .agents/skills, which the agent can change", () => {
  const workspace = () => {
    const root = mkdtempSync(join(tmpdir(), 'skills-ws-'));
    skillFolder(join(root, '.agents', 'skills'), 'notes', manifest('notes', 'Our notes.'), { 'more.md': 'MORE' });
    return root;
  };

  it('lists and reads what is there, through the SDK catalog', async () => {
    const root = workspace();
    const files = workspaceSkillFiles(root, 1024);
    const catalog = await SkillCatalog.load(files, { onWarning: () => undefined });
    expect(catalog.entries.map((entry) => entry.frontmatter.name)).toEqual(['notes']);
    expect(Buffer.from(await files.read('notes/more.md')).toString()).toBe('MORE');
  });

  it('never follows a link: not as the folder, not inside it, not as a file; refuses `..` and a file over the bound', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'skills-outside-'));
    skillFolder(outside, 'stolen', manifest('stolen', 'Outside the workspace.'));
    writeFileSync(join(outside, 'secret.txt'), 'SECRET');
    const linkedRoot = mkdtempSync(join(tmpdir(), 'skills-ws-'));
    mkdirSync(join(linkedRoot, '.agents'));
    symlinkSync(outside, join(linkedRoot, '.agents', 'skills'));
    await expect(workspaceSkillFiles(linkedRoot, 1024).list('')).rejects.toThrow();

    const root = workspace();
    symlinkSync(join(outside, 'stolen'), join(root, '.agents', 'skills', 'stolen'));
    symlinkSync(join(outside, 'secret.txt'), join(root, '.agents', 'skills', 'notes', 'secret.txt'));
    const files = workspaceSkillFiles(root, 16);
    expect((await files.list('')).find((entry) => entry.name === 'stolen')!.kind).toBe('unsupported');
    await expect(files.read('notes/secret.txt')).rejects.toThrow();
    await expect(files.read('stolen/SKILL.md')).rejects.toThrow();
    await expect(files.read('notes/../../../etc/passwd')).rejects.toThrow(/inside the skills folder/);
    await expect(files.read('notes/SKILL.md')).rejects.toThrow(/over 16/);
    // The catalog skips the skill with a link in it, and the linked one.
    const warned: string[] = [];
    const catalog = await SkillCatalog.load(workspaceSkillFiles(root, 1024), { onWarning: (warning) => void warned.push(warning.path) });
    expect(catalog.entries).toEqual([]);
    expect(warned).toEqual(expect.arrayContaining(['notes/secret.txt', 'stolen']));
  });
});
