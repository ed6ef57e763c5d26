import { describe, expect, it } from '@jest/globals';
import { criticalPathTokens, executionOrder, parsePlan, type Subtask } from '../../src/agent/plan.js';

const subtask = (id: string, dependsOn: string[] = []) => ({ id, title: `do ${id}`, instructions: `instructions for ${id}`, depends_on: dependsOn });
const planOf = (...subtasks: unknown[]) => JSON.stringify({ mode: 'plan', subtasks });

describe('parsePlan', () => {
  it('reads a plan of subtasks, trimming ids and titles and cutting titles at 200 characters', () => {
    const content = planOf({ ...subtask(' a '), title: ` ${'t'.repeat(250)} ` }, subtask('b', ['a']));
    expect(parsePlan(content, 8)).toEqual({
      plan: {
        mode: 'plan',
        subtasks: [
          { id: 'a', title: 't'.repeat(200), instructions: 'instructions for  a ', dependsOn: [] },
          { id: 'b', title: 'do b', instructions: 'instructions for b', dependsOn: ['a'] },
        ],
      },
    });
  });

  it('takes the direct path for mode direct, and for a plan of one subtask, without a problem', () => {
    expect(parsePlan(JSON.stringify({ mode: 'direct', subtasks: [] }), 8)).toEqual({ plan: { mode: 'direct' } });
    expect(parsePlan(planOf(subtask('a')), 8)).toEqual({ plan: { mode: 'direct' }, problem: undefined });
  });

  it('keeps only string dependencies', () => {
    const { plan } = parsePlan(planOf(subtask('a'), { ...subtask('b'), depends_on: ['a', 7, null] }), 8);
    expect(plan.mode === 'plan' && plan.subtasks[1].dependsOn).toEqual(['a']);
  });

  it.each([
    ['not JSON', '{"mode": "plan",', 'the plan was not valid JSON'],
    ['no subtasks', planOf(), 'the plan had no subtasks'],
    ['a subtask without instructions', planOf(subtask('a'), { id: 'b', title: 'b' }), 'a subtask lacks id, title or instructions'],
    ['a subtask that is not an object', planOf(subtask('a'), null), 'a subtask lacks id, title or instructions'],
    ['too many subtasks', planOf(subtask('a'), subtask('b'), subtask('c')), 'the plan had more than 2 subtasks'],
    ['duplicate ids', planOf(subtask('a'), subtask('a')), 'subtask ids are not unique'],
    ['unknown dependencies', planOf(subtask('a', ['x']), subtask('b', ['y'])), 'unknown dependencies: x, y'],
    ['a cycle', planOf(subtask('a', ['b']), subtask('b', ['a'])), 'the dependencies form a cycle'],
  ])('falls back to the direct path with the reason for %s', (_name, content, problem) => {
    expect(parsePlan(content, 2)).toEqual({ plan: { mode: 'direct' }, problem });
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
    expect(criticalPathTokens(subtasks, new Map([['a', 10], ['b', 30], ['c', 5]]))).toBe(35);
    expect(criticalPathTokens([], new Map())).toBe(0);
  });
});
