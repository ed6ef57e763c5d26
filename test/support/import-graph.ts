import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';

/** A directed graph: each node's set of successors. */
export type Graph = Map<string, Set<string>>;

/** One relative import: the importing file and the file it names, both relative to the source root. */
export interface ImportEdge {
  from: string;
  to: string;
}

/**
 * The relative module specifiers `source` names: static and type-only imports, `export ... from`,
 * dynamic `import()`. The TypeScript scanner reads them, so comments and strings never count.
 */
export function relativeSpecifiers(source: string): string[] {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((file) => file.fileName)
    .filter((name) => name.startsWith('./') || name.startsWith('../'));
}

/** Every relative import between the `.ts` files under `root` (`./x.js` names `x.ts`, as with nodenext). */
export function importEdges(root: string): ImportEdge[] {
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
  return files.flatMap((file) =>
    relativeSpecifiers(readFileSync(join(root, file), 'utf8')).map((specifier) => ({
      from: toPosix(file),
      to: toPosix(relative(root, join(root, dirname(file), specifier.replace(/\.js$/, '.ts')))),
    })),
  );
}

/** The top-level directory a file belongs to, or null for a file at the root (the composition root). */
export function topLevelDirectory(file: string): string | null {
  const slash = file.indexOf('/');
  return slash === -1 ? null : file.slice(0, slash);
}

export function addEdge(graph: Graph, from: string, to: string): void {
  if (!graph.has(from)) graph.set(from, new Set());
  graph.get(from)!.add(to);
}

/**
 * A cycle of `graph` as the path that walks it (`['a', 'b', 'a']`), or null when there is none.
 * Depth-first, visiting nodes and successors in sorted order, so the same graph names the same cycle.
 */
export function findCycle(graph: Graph): string[] | null {
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (node: string): string[] | null => {
    if (onPath.has(node)) return [...path.slice(path.indexOf(node)), node];
    if (done.has(node)) return null;
    path.push(node);
    onPath.add(node);
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    onPath.delete(node);
    done.add(node);
    return null;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

const toPosix = (path: string) => path.split(sep).join('/');
