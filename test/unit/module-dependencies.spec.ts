import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { addEdge, findCycle, importEdges, relativeSpecifiers, topLevelDirectory, type Graph, type ImportEdge } from '../support/import-graph.js';

/**
 * Dependencies point one way (DESIGN.md): no top-level directory of src/ (one Nest module per
 * concern) imports another that imports it back, however indirectly. Files at src/'s root are the
 * composition root (entry points, the app module): they may import anything, and nothing imports them.
 */
const SRC = join(import.meta.dirname, '../../src');

const graphOf = (pairs: [string, string][]): Graph => {
  const graph: Graph = new Map();
  for (const [from, to] of pairs) addEdge(graph, from, to);
  return graph;
};

/** `a → b → a`, each arrow with one import that makes it, so a failure says what to move. */
function describeCycle(cycle: string[], witness: (from: string, to: string) => ImportEdge): string {
  const arrows = cycle.slice(1).map((to, index) => {
    const edge = witness(cycle[index], to);
    return `  ${cycle[index]} → ${to}: ${edge.from} imports ${edge.to}`;
  });
  return [cycle.join(' → '), ...arrows].join('\n');
}

describe('module dependencies of src/', () => {
  const edges = importEdges(SRC);

  it('reads the imports it checks (every relative import names a file that exists)', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(edges.filter((edge) => !existsSync(join(SRC, edge.to)))).toEqual([]);
  });

  it('has no cycle between top-level directories', () => {
    const graph: Graph = new Map();
    const witnesses = new Map<string, ImportEdge>();
    for (const edge of edges) {
      const from = topLevelDirectory(edge.from);
      const to = topLevelDirectory(edge.to);
      if (from === null || to === null || from === to) continue;
      addEdge(graph, from, to);
      if (!witnesses.has(`${from} ${to}`)) witnesses.set(`${from} ${to}`, edge);
    }
    const cycle = findCycle(graph);
    expect(cycle && describeCycle(cycle, (from, to) => witnesses.get(`${from} ${to}`)!)).toBeNull();
  });

  it('has nothing import the composition root (the files at the root of src/)', () => {
    const intoRoot = edges.filter((edge) => topLevelDirectory(edge.from) !== null && topLevelDirectory(edge.to) === null);
    expect(intoRoot).toEqual([]);
  });

  it('has no cycle between files', () => {
    const graph = graphOf(edges.map((edge) => [edge.from, edge.to]));
    const cycle = findCycle(graph);
    expect(cycle && describeCycle(cycle, (from, to) => ({ from, to }))).toBeNull();
  });
});

describe("stdout, the stdio server's protocol channel (a stray line there breaks every MCP client)", () => {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  const writesStdout = (file: string) => /process\.stdout|console\.(log|info|debug|dir|table)\(/.test(readFileSync(join(SRC, file), 'utf8'));

  // The bin (cli.ts) writes its usage and version only, and imports the command's entry point for the rest.
  it('is written by the stdio transport (its default stream), the bin, the doctor and the commands in cli/ (init, eval) only; logs go to stderr', () => {
    expect(
      files
        .filter(writesStdout)
        .map((file) => file.split('\\').join('/'))
        .sort(),
    ).toEqual(['cli.ts', 'cli/eval.ts', 'cli/init.ts', 'doctor.ts', 'mcp/stdio-line-transport.ts']);
  });

  it('never has the doctor or init in the stdio server: each is its own entry point (dist/doctor.js, dist/init.js), imported by nothing', () => {
    expect(importEdges(SRC).filter((edge) => edge.to === 'doctor.ts' || edge.to.startsWith('cli/'))).toEqual([]);
  });
});

describe('the cycle finder', () => {
  it('finds no cycle in a graph without one, diamonds included', () => {
    expect(
      findCycle(
        graphOf([
          ['tools', 'queue'],
          ['queue', 'agent'],
          ['tools', 'sessions'],
          ['agent', 'sessions'],
          ['agent', 'database'],
        ]),
      ),
    ).toBeNull();
    expect(findCycle(new Map())).toBeNull();
  });

  it('names the path of a cycle, however long', () => {
    expect(
      findCycle(
        graphOf([
          ['database', 'queue'],
          ['queue', 'database'],
        ]),
      ),
    ).toEqual(['database', 'queue', 'database']);
    expect(
      findCycle(
        graphOf([
          ['a', 'b'],
          ['b', 'c'],
          ['c', 'd'],
          ['d', 'b'],
          ['a', 'e'],
        ]),
      ),
    ).toEqual(['b', 'c', 'd', 'b']);
  });

  it('finds a cycle reached only through acyclic nodes, and a node importing itself', () => {
    expect(
      findCycle(
        graphOf([
          ['a', 'b'],
          ['b', 'x'],
          ['x', 'y'],
          ['y', 'x'],
        ]),
      ),
    ).toEqual(['x', 'y', 'x']);
    expect(findCycle(graphOf([['a', 'a']]))).toEqual(['a', 'a']);
  });

  it('reads every kind of relative import, and nothing in comments or of packages', () => {
    const source = [
      "import { A } from './a.js';",
      "import type { B } from '../b/b.js';",
      "export { C } from './c.js';",
      "export * from './d.js';",
      "const e = await import('./e.js');",
      "import './f.js';",
      "import { Module } from '@nestjs/common';",
      "// import { G } from './g.js';",
      'const text = "from \'./h.js\'";',
    ].join('\n');
    expect(relativeSpecifiers(source).sort()).toEqual(['../b/b.js', './a.js', './c.js', './d.js', './e.js', './f.js']);
  });

  it('describes a cycle with the import behind each arrow', () => {
    const text = describeCycle(['database', 'queue', 'database'], (from, to) => ({ from: `${from}/x.ts`, to: `${to}/y.ts` }));
    expect(text).toBe('database → queue → database\n  database → queue: database/x.ts imports queue/y.ts\n  queue → database: queue/x.ts imports database/y.ts');
  });
});

describe("docs/architecture.md's one-way arrows", () => {
  it('draw the directories of src/ as they import each other (a mismatch prints the block to paste)', () => {
    const graph: Graph = new Map();
    const directories = new Set<string>();
    for (const edge of importEdges(SRC)) {
      const from = topLevelDirectory(edge.from);
      const to = topLevelDirectory(edge.to);
      if (from !== null) directories.add(from);
      if (to !== null) directories.add(to);
      if (from === null || to === null || from === to || HIDDEN.has(to)) continue;
      addEdge(graph, from, to);
    }
    const doc = readFileSync(join(SRC, '../docs/architecture.md'), 'utf8');
    const drawn = /## The one-way arrows[\s\S]*?```\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(drawn).toBe(
      arrowsBlock(
        graph,
        [...directories].filter((dir) => !HIDDEN.has(dir)),
      ),
    );
  });
});

/** Imported by most directories: left out of the drawing (the text says so). */
const HIDDEN = new Set(['common', 'config']);

/** One line per directory, each above the directories it imports (the first one no undrawn directory imports). */
function arrowsBlock(graph: Graph, directories: string[]): string {
  const left = new Set(directories);
  const lines: string[] = [];
  while (left.size > 0) {
    const next = [...left].sort().find((dir) => ![...left].some((other) => graph.get(other)?.has(dir))) ?? [...left].sort()[0];
    left.delete(next);
    const imports = [...(graph.get(next) ?? [])].sort();
    lines.push(`${next.padEnd(14)} ──> ${imports.length > 0 ? imports.join(' ') : '(nothing but common/ and config/)'}`);
  }
  return `composition root ──> everything it wires\n${lines.join('\n')}\n`;
}
