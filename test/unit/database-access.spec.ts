import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Repositories (and the unit of work, in src/database/) are the only code that reaches the database
 * (issue 10): a service composes their steps, but never holds a DataSource, an EntityManager or PlainSql.
 * Entities may use TypeORM's decorators, and modules register them with TypeOrmModule.forFeature.
 */
const SRC = join(import.meta.dirname, '../../src');

/** The names a file imports as values (type-only imports carry no connection) from each module specifier. */
function valueImports(source: string): { from: string; names: string[] }[] {
  const imports: { from: string; names: string[] }[] = [];
  for (const match of source.matchAll(/^import\s+(type\s+)?(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\})?\s*from\s+'([^']+)'/gm)) {
    const [, typeOnly, defaultName, named, from] = match;
    if (typeOnly) continue;
    const names = (named ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name && !name.startsWith('type '))
      .map((name) => name.split(/\s+as\s+/)[0]);
    if (defaultName) names.push(defaultName);
    if (names.length > 0) imports.push({ from, names });
  }
  return imports;
}

/** Why `file` (relative to src/) may not import what it does, or null when it keeps to the rule. */
function databaseAccessProblem(file: string, source: string): string | null {
  if (file.startsWith('database/')) return null;
  for (const { from, names } of valueImports(source)) {
    if ((from === 'typeorm' || from.startsWith('typeorm/')) && !file.endsWith('.entity.ts')) return `imports ${names.join(', ')} from ${from}`;
    if (from === '@nestjs/typeorm' && (!file.endsWith('.module.ts') || names.some((name) => name !== 'TypeOrmModule'))) return `imports ${names.join(', ')} from ${from}`;
    if (from.endsWith('/database/plain-sql.js') && !file.endsWith('.repository.ts')) return `imports ${names.join(', ')} from ${from}`;
  }
  return null;
}

describe('database access', () => {
  it('happens only in repositories and src/database/', () => {
    const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(150);
    const problems = files.flatMap((file) => {
      const problem = databaseAccessProblem(file, readFileSync(join(SRC, file), 'utf8'));
      return problem ? [`${file} ${problem}`] : [];
    });
    expect(problems).toEqual([]);
  });

  it('names a service that holds a connection, and lets types, entities and module registration through', () => {
    expect(databaseAccessProblem('queue/x.service.ts', "import { DataSource } from 'typeorm';")).toBe('imports DataSource from typeorm');
    expect(databaseAccessProblem('queue/x.service.ts', "import { InjectDataSource } from '@nestjs/typeorm';")).toMatch(/InjectDataSource/);
    expect(databaseAccessProblem('queue/x.service.ts', "import { PlainSql, type SqlStep } from '../database/plain-sql.js';")).toBe(
      'imports PlainSql from ../database/plain-sql.js',
    );
    expect(databaseAccessProblem('queue/x.service.ts', "import type { SqlStep } from '../database/plain-sql.js';")).toBeNull();
    expect(databaseAccessProblem('queue/x.service.ts', "import { type SqlStep } from '../database/plain-sql.js';")).toBeNull();
    expect(databaseAccessProblem('queue/x.repository.ts', "import { PlainSql } from '../database/plain-sql.js';")).toBeNull();
    expect(databaseAccessProblem('queue/x.entity.ts', "import { Column, Entity } from 'typeorm';")).toBeNull();
    expect(databaseAccessProblem('queue/x.module.ts', "import { TypeOrmModule } from '@nestjs/typeorm';")).toBeNull();
    expect(databaseAccessProblem('database/x.ts', "import { DataSource } from 'typeorm';")).toBeNull();
  });
});
