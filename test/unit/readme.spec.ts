import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');
const README = join(ROOT, 'README.md');

/** Every Markdown file a reader of the repository follows links through: the README, docs/ and deploy/'s README. */
const documents = [
  README,
  join(ROOT, 'deploy/README.md'),
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => join(ROOT, 'docs', file)),
];

/** The targets of inline Markdown links, `[text](target)`, outside code blocks and code spans. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]);
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
const anchor = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsOf = (file: string) => new Set([...readFileSync(file, 'utf8').matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => anchor(match[1])));

describe('the README and the docs', () => {
  it('keep the README a quick start: at most 3 000 words', () => {
    const words = readFileSync(README, 'utf8').split(/\s+/).filter(Boolean).length;
    expect(words).toBeLessThanOrEqual(3000);
  });

  it('link only to files of this repository that exist, and to headings that exist in them', () => {
    const broken: string[] = [];
    for (const file of documents) {
      for (const target of linkTargets(readFileSync(file, 'utf8'))) {
        if (/^[a-z]+:/i.test(target)) continue;
        const [path, fragment] = target.split('#');
        const resolved = path ? resolve(dirname(file), decodeURIComponent(path)) : file;
        const where = `${relative(ROOT, file)}: ${target}`;
        if (relative(ROOT, resolved).startsWith('..')) broken.push(`${where} (outside the repository)`);
        else if (!existsSync(resolved)) broken.push(`${where} (no such file)`);
        else if (fragment && statSync(resolved).isFile() && !anchorsOf(resolved).has(fragment)) broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('name no file outside the repository (a clone has no ../shared)', () => {
    const outside = documents.filter((file) => /\.\.\/shared\//.test(readFileSync(file, 'utf8'))).map((file) => relative(ROOT, file));
    expect(outside).toEqual([]);
  });
});
