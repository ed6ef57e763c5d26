import { describe, expect, it } from '@jest/globals';
import { criticalPathTokens, executionOrder, readPlan, type Subtask } from '../../src/agent/plan.js';

const subtask = (id: string, dependsOn: string[] = []) => ({ id, title: `do ${id}`, instructions: `instructions for ${id}`, depends_on: dependsOn });

describe("readPlan (the plan tool's subtasks)", () => {
  it('reads a plan of subtasks, trimming ids and titles and cutting titles at 200 characters', () => {
    const items = [{ ...subtask(' a '), title: ` ${'t'.repeat(250)} ` }, subtask('b', ['a'])];
    expect(readPlan(items, 8)).toEqual({
      subtasks: [
        { id: 'a', title: 't'.repeat(200), instructions: 'instructions for  a ', dependsOn: [] },
        { id: 'b', title: 'do b', instructions: 'instructions for b', dependsOn: ['a'] },
      ],
    });
  });

  it('reads subtasks a model sent as a JSON string', () => {
    expect(readPlan(JSON.stringify([subtask('a'), subtask('b')]), 8)).toMatchObject({ subtasks: [{ id: 'a' }, { id: 'b' }] });
  });

  it('reads a list of strings, or one numbered text, as sequential subtasks (issue 35: they were refused)', () => {
    const sequential = [
      { id: 's1', title: 'Read math.js', instructions: 'Read math.js', dependsOn: [] },
      { id: 's2', title: 'Fix add()', instructions: 'Fix add()\nkeep the signature', dependsOn: ['s1'] },
      { id: 's3', title: 'Run node test.mjs', instructions: 'Run node test.mjs', dependsOn: ['s2'] },
    ];
    expect(readPlan(['Read math.js', 'Fix add()\nkeep the signature', ' Run node test.mjs '], 8)).toEqual({ subtasks: sequential });
    expect(readPlan(JSON.stringify(['Read math.js', 'Fix add()\nkeep the signature', 'Run node test.mjs']), 8)).toEqual({ subtasks: sequential });
    expect(readPlan('1. Read math.js\n2) Fix add()\nkeep the signature\n3. Run node test.mjs', 8)).toEqual({ subtasks: sequential });
    expect(readPlan(['only one'], 8)).toEqual({ problem: 'a plan needs at least 2 subtasks; for one step, just do it' });
    expect(readPlan(['a', ' '], 8)).toEqual({ problem: 'a subtask is empty' });
    expect(readPlan('just do it', 8)).toEqual({ problem: 'subtasks must be a list of {id, title, instructions, depends_on}' });
  });

  it('keeps only string dependencies', () => {
    const read = readPlan([subtask('a'), { ...subtask('b'), depends_on: ['a', 7, null] }], 8);
    expect('subtasks' in read && read.subtasks[1].dependsOn).toEqual(['a']);
  });

  it.each([
    ['not a list', '{"id": "a",', 'subtasks must be a list of {id, title, instructions, depends_on}'],
    ['one subtask', [subtask('a')], 'a plan needs at least 2 subtasks; for one step, just do it'],
    ['a subtask without instructions', [subtask('a'), { id: 'b', title: 'b' }], 'a subtask lacks id, title or instructions'],
    ['a subtask that is not an object', [subtask('a'), null], 'a subtask lacks id, title or instructions'],
    ['too many subtasks', [subtask('a'), subtask('b'), subtask('c')], 'a plan may have at most 2 subtasks'],
    ['duplicate ids', [subtask('a'), subtask('a')], 'subtask ids are not unique'],
    ['unknown dependencies', [subtask('a', ['x']), subtask('b', ['y'])], 'unknown dependencies: x, y'],
    ['a cycle', [subtask('a', ['b']), subtask('b', ['a'])], 'the dependencies form a cycle'],
  ])('refuses %s with the reason', (_name, items, problem) => {
    expect(readPlan(items, 2)).toEqual({ problem });
  });
});

describe('executionOrder and criticalPathTokens', () => {
  const s = (id: string, dependsOn: string[] = []): Subtask => ({ id, title: id, instructions: id, dependsOn });

  it('runs dependencies first and keeps the planner order otherwise; null on a cycle', () => {
    expect(executionOrder([s('a', ['c']), s('b'), s('c')])?.map((subtask) => subtask.id)).toEqual(['b', 'c', 'a']);
    expect(executionOrder([s('a', ['a'])])).toBeNull();
  });

  it('weighs the heaviest dependency chain', () => {
    const subtasks = [s('a'), s('b'), s('c', ['a', 'b'])];
    expect(criticalPathTokens(subtasks, { a: 10, b: 30, c: 5 })).toBe(35);
    expect(criticalPathTokens([], {})).toBe(0);
  });
});
