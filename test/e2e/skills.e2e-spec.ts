import { describe, expect, it } from '@jest/globals';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLAN_GUIDANCE, SYSTEM_PROMPT } from '../../src/agent/prompts.js';
import { SKILL_TOOL, SKILLS_HEADING, SKILLS_SEARCH_NOTICE } from '../../src/skills/skill-tool-source.js';
import type { Client } from '@modelcontextprotocol/client';
import { probe } from '../support/database-probe.js';
import { openBrowser } from '../support/browser.js';
import { fieldsOf, modernClient, textOf, waitForTerminal } from '../support/mcp-clients.js';
import { pollUntil } from '../support/poll.js';
import { ADMIN_TOKEN, answer, calls, stdio, toolNames, useMcpStack } from '../support/mcp-servers-stack.js';
import { ADMIN, as, PROXY_AUTH } from '../support/proxy-identity.js';

/**
 * Agent Skills (issue 40) end to end, with real skill folders on disk: the operator's (`skills.dirs`,
 * one limited to a group), a real MCP SDK server serving its own through the skills extension
 * (test/support/skills-server.mjs: the SDK's SkillsExtension over a folder), and this service's own
 * MCP clients reading the operator's skills with the SDK's SkillsClient.
 */

const SERVER_SCRIPT = join(import.meta.dirname, '../support/skills-server.mjs');

/** One skill folder: SKILL.md with its front matter, and files beside it. */
function writeSkill(root: string, folder: string, frontMatter: string, body: string, files: Record<string, string> = {}): void {
  mkdirSync(join(root, folder), { recursive: true });
  writeFileSync(join(root, folder, 'SKILL.md'), `---\n${frontMatter}\n---\n${body}`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, folder, path, '..'), { recursive: true });
    writeFileSync(join(root, folder, path), text);
  }
}

/** Runs one Task as another user (their own client) to its end. */
async function runAs(client: Client, request: string): Promise<void> {
  const accepted = fieldsOf(textOf(await client.callTool({ name: 'agent_run', arguments: { request } })));
  await waitForTerminal(async (id) => textOf(await client.callTool({ name: 'agent_status', arguments: { task_id: id } })), accepted.task_id, 20_000);
}

const systemPrompt = (h: ReturnType<typeof useMcpStack>, index = -1) => h.ollama.workChats.at(index)!.body.messages[0].content;

describe('operator folders, a group-limited folder, and an MCP server that serves skills', () => {
  const everyone = mkdtempSync(join(tmpdir(), 'oam-skills-'));
  const ops = mkdtempSync(join(tmpdir(), 'oam-skills-ops-'));
  const served = mkdtempSync(join(tmpdir(), 'oam-skills-served-'));
  writeSkill(everyone, 'release', 'name: release\ndescription: How we cut a release.', '# Release\nRELEASE-BODY: tag, then publish.\n', {
    'references/checklist.md': 'CHECKLIST-BODY\n',
  });
  writeSkill(everyone, 'ci-logs', 'name: ci-logs\ndescription: "How to read our CI logs:\\nlook for the first FAIL."', 'CI-BODY\n');
  // Front matter that is not YAML, and a name that breaks the format's rules: each skipped with a warning.
  writeSkill(everyone, 'broken', 'name: [unclosed', 'BROKEN-BODY\n');
  writeSkill(everyone, 'Bad_Name', 'name: Bad_Name\ndescription: not a valid name', 'BAD-BODY\n');
  writeSkill(ops, 'deploy-prod', 'name: deploy-prod\ndescription: Deploying to production.', 'DEPLOY-BODY\n');
  writeSkill(served, 'review', 'name: review\ndescription: Our review checklist.', 'REVIEW-BODY\n', { 'extra.md': 'REVIEW-EXTRA\n' });

  /** The Task that loaded `release` (its trace is shown in the console). */
  let releaseTask = '';
  const h = useMcpStack(
    () => ({
      auth: { ...PROXY_AUTH, admin_token: ADMIN_TOKEN },
      skills: { dirs: [everyone, { path: ops, allow_groups: ['ops'] }] },
      agent: { mcp_servers: { team: { ...stdio(SERVER_SCRIPT, [served]) } } },
    }),
    { headers: as('alice@example.com', 'dev') },
  );

  it('lists names and descriptions in the first model call, none of the bodies, and loads a body and a file through the skill tool', async () => {
    h.ollama.enqueue(calls(['skill', { name: 'release' }]), calls(['skill', { name: 'release', file: 'references/checklist.md' }]), answer('released'));
    const { taskId, text } = await h.run('cut a release');
    releaseTask = taskId;
    expect(text).toContain('completed');
    const first = h.ollama.workChats.at(-3)!;
    const prompt = first.body.messages[0].content;
    expect(
      prompt.endsWith(
        [SKILLS_HEADING, '- ci-logs: How to read our CI logs: look for the first FAIL.', '- release: How we cut a release.', '- team/review: Our review checklist.'].join('\n'),
      ),
    ).toBe(true);
    expect(JSON.stringify(first.body.messages)).not.toMatch(/RELEASE-BODY|CI-BODY|REVIEW-BODY|DEPLOY-BODY|deploy-prod|BROKEN|Bad_Name/);
    expect(toolNames(first)).toContain('skill');
    expect(first.body.tools!.find((tool) => tool.function.name === 'skill')).toEqual(SKILL_TOOL);
    const results = h.toolResults();
    expect(results[0].content).toMatch(/^# Release\nRELEASE-BODY: tag, then publish\.\n\n\[Files of this skill.*references\/checklist\.md\]$/);
    expect(results[0].content).not.toContain('description:');
    expect(results[1].content).toBe('CHECKLIST-BODY\n');
    const loads = await h.audit(taskId, 'skill.load');
    expect(loads.map((load) => [load.outcome, JSON.parse(load.detail).skill, JSON.parse(load.detail).file])).toEqual([
      ['ok', 'release', null],
      ['ok', 'release', 'references/checklist.md'],
    ]);
    const steps = await probe<{ detail: string }>(h.db, "SELECT detail FROM task_steps WHERE task_id = ? AND name = 'skill' ORDER BY seq", taskId);
    expect(steps.map((step) => JSON.parse(step.detail).skill)).toEqual(['release', 'release']);
  });

  it('skips a malformed skill with a warning naming its file, and loads the rest', () => {
    expect(h.service.stderr).toContain(`skipped "${join(everyone, 'broken', 'SKILL.md')}"`);
    expect(h.service.stderr).toContain(`skipped "${join(everyone, 'Bad_Name', 'SKILL.md')}"`);
  });

  it('neither lists nor loads a group-limited skill for another group: the same answer as a skill that does not exist', async () => {
    h.ollama.enqueue(calls(['skill', { name: 'deploy-prod' }], ['skill', { name: 'no-such-skill' }]), answer('cannot'));
    const { taskId } = await h.run('deploy');
    const [limited, missing] = h.toolResults();
    expect(limited.content).toBe('Error: no such skill "deploy-prod". Use a name exactly as listed.');
    expect(missing.content).toBe('Error: no such skill "no-such-skill". Use a name exactly as listed.');
    expect((await h.audit(taskId, 'skill.load')).map((load) => load.outcome)).toEqual(['rejected', 'rejected']);
    // Someone in ops sees it listed and loads it.
    const bob = h.stack.closeOnStop(await modernClient(h.service.url, as('bob@example.com', 'dev, ops')));
    h.ollama.enqueue(calls(['skill', { name: 'deploy-prod' }]), answer('deployed'));
    await runAs(bob, 'deploy');
    expect(systemPrompt(h, -2)).toContain('- deploy-prod: Deploying to production.');
    expect(h.toolResults()[0].content).toBe('DEPLOY-BODY\n');
  });

  it("loads an MCP server's skill under <server>/<name>, read and verified through the skills extension", async () => {
    h.ollama.enqueue(calls(['skill', { name: 'team/review' }], ['skill', { name: 'team/review', file: 'extra.md' }]), answer('reviewed'));
    await h.run('review this');
    const [body, extra] = h.toolResults();
    expect(body.content).toMatch(/^REVIEW-BODY\n\n\[Files of this skill.*extra\.md\]$/);
    expect(extra.content).toBe('REVIEW-EXTRA\n');
  });

  it("serves the operator's skills to this service's MCP clients by group, and lists them in the console", async () => {
    const skills = new SkillsClient(h.client);
    expect(skills.supported).toBe(true);
    const listing = await skills.list();
    expect(listing.skills.map((skill) => skill.frontmatter.name)).toEqual(['ci-logs', 'release']);
    const release = listing.skills.find((skill) => skill.frontmatter.name === 'release')!;
    const file = await skills.read(release);
    expect(file.verified).toBe(true);
    expect(file.body).toContain('RELEASE-BODY');
    expect((await skills.read(release, 'references/checklist.md')).text).toBe('CHECKLIST-BODY\n');
    // Another group's skill: not listed, and neither its entry nor its file can be had.
    const hidden = `skill://deploy-prod/SKILL.md`;
    await expect(skills.get(hidden)).rejects.toThrow(/No skill is served/);
    await expect(h.client.readResource({ uri: hidden })).rejects.toThrow();
    const bob = h.stack.closeOnStop(await modernClient(h.service.url, as('bob@example.com', 'dev, ops')));
    expect((await new SkillsClient(bob).list()).skills.map((skill) => skill.frontmatter.name)).toEqual(['ci-logs', 'deploy-prod', 'release']);

    const listed = await fetch(`${h.stack.base}/admin/skills`, { headers: as('alice@example.com', 'dev') });
    expect(listed.status).toBe(200);
    const names = ((await listed.json()) as { skills: { name: string; origin: string }[] }).skills.map((skill) => `${skill.origin}:${skill.name}`);
    expect(names).toEqual(['operator:ci-logs', 'operator:release', 'mcp:team/review']);
    // The console's Skills page shows the same, as text.
    const browser = h.stack.closeOnStop(await openBrowser());
    const page = await (await browser.newContext({ extraHTTPHeaders: as('alice@example.com', 'dev') })).newPage();
    await page.goto(`${h.stack.base}/admin#/skills`);
    await page.waitForSelector('#skills tr td.mono');
    expect(await page.locator('#skills tr td:first-child').allTextContents()).toEqual(['ci-logs', 'release', 'team/review']);
    expect(await page.textContent('#skills')).toContain('MCP server');
    // The Task's trace shows which skill, and which file of it, the Task loaded.
    await page.goto(`${h.stack.base}/admin#/tasks/${releaseTask}`);
    await page.waitForSelector('#trace li');
    expect(await page.textContent('#trace')).toContain('name: release · file: references/checklist.md');
  });

  it('re-reads a folder when it changes, and on POST /admin/skills/reload', async () => {
    writeSkill(everyone, 'hotfix', 'name: hotfix\ndescription: Shipping a hotfix.', 'HOTFIX-BODY\n');
    const listed = async () =>
      ((await (await fetch(`${h.stack.base}/admin/skills`, { headers: as('alice@example.com', 'dev') })).json()) as { skills: { name: string }[] }).skills.map(
        (skill) => skill.name,
      );
    await pollUntil(async () => ((await listed()).includes('hotfix') ? true : undefined), 'the new skill to be read', { timeoutMs: 10_000 });
    writeSkill(everyone, 'hotfix', 'name: hotfix\ndescription: Shipping a hotfix, changed.', 'HOTFIX-BODY\n');
    // Reloading is for admins: a user is refused (and audited), an admin re-reads the folders at once.
    expect((await fetch(`${h.stack.base}/admin/skills/reload`, { method: 'POST', headers: as('alice@example.com', 'dev') })).status).toBe(403);
    const reloaded = await fetch(`${h.stack.base}/admin/skills/reload`, { method: 'POST', headers: ADMIN });
    expect(reloaded.status).toBe(200);
    const body = (await reloaded.json()) as { skills: { name: string; description: string }[] };
    expect(body.skills.find((skill) => skill.name === 'hotfix')!.description).toBe('Shipping a hotfix, changed.');
    h.ollama.enqueue(answer('ok'));
    await h.run('anything');
    expect(systemPrompt(h)).toContain('- hotfix: Shipping a hotfix, changed.');
  });
});

describe("past skills.max_listed, a caller with no skill, and a session's own skills", () => {
  const ops = mkdtempSync(join(tmpdir(), 'oam-skills-many-'));
  writeSkill(ops, 'incident-review', 'name: incident-review\ndescription: Writing up an incident.', 'INCIDENT-BODY\n');
  writeSkill(ops, 'release-notes', 'name: release-notes\ndescription: Writing the release notes.', 'NOTES-BODY\n');
  const h = useMcpStack(
    () => ({ auth: { ...PROXY_AUTH, admin_token: ADMIN_TOKEN }, skills: { dirs: [{ path: ops, allow_groups: ['ops'] }], max_listed: 1, from_workspace: true } }),
    {
      headers: as('alice@example.com', 'dev'),
    },
  );

  it('keeps the fixed prompt and the tools byte for byte what they are without skills, for a caller who may use none', async () => {
    h.ollama.enqueue(answer('hello'));
    await h.run('hello');
    expect(systemPrompt(h)).toBe(SYSTEM_PROMPT + PLAN_GUIDANCE);
    expect(toolNames(h.ollama.workChats.at(-1)!)).toEqual(['list_dir', 'read_file', 'write_file', 'edit_file', 'glob', 'grep', 'run_command', 'plan', 'ask_user']);
  });

  it('lists none past max_listed and offers find_skills, which finds a skill the skill tool then loads', async () => {
    const bob = h.stack.closeOnStop(await modernClient(h.service.url, as('bob@example.com', 'ops')));
    h.ollama.enqueue(calls(['find_skills', { query: 'release notes' }]), calls(['skill', { name: 'release-notes' }]), answer('written'));
    await runAs(bob, 'write the notes');
    const first = h.ollama.workChats.at(-3)!;
    expect(first.body.messages[0].content).toBe(`${SYSTEM_PROMPT}${PLAN_GUIDANCE}\n${SKILLS_SEARCH_NOTICE}`);
    expect(toolNames(first).slice(-2)).toEqual(['find_skills', 'skill']);
    const [found, loaded] = h.toolResults();
    expect(found.content.split('\n')[1]).toBe('- release-notes: Writing the release notes.');
    expect(loaded.content).toBe('NOTES-BODY\n');
  });

  it('lists a skill the session wrote in its workspace from the next Task on, labelled as written there, and loads it', async () => {
    const skill = '---\nname: house-style\ndescription: How this session writes.\n---\nHOUSE-STYLE-BODY\n';
    h.ollama.enqueue(calls(['write_file', { path: '.agents/skills/house-style/SKILL.md', content: skill }]), answer('written'));
    const first = await h.run('write down our style');
    h.ollama.enqueue(calls(['skill', { name: 'house-style' }]), answer('followed'));
    await h.run('follow our style', first.sessionId);
    const prompt = h.ollama.workChats.at(-2)!.body.messages[0].content;
    expect(prompt.endsWith(`${SKILLS_HEADING}\n- house-style: How this session writes. (written in the session workspace)`)).toBe(true);
    expect(h.toolResults()[0].content).toBe('HOUSE-STYLE-BODY\n');
    // Another session of the same user has none.
    h.ollama.enqueue(answer('hello'));
    await h.run('hello');
    expect(systemPrompt(h)).toBe(SYSTEM_PROMPT + PLAN_GUIDANCE);
  });
});
