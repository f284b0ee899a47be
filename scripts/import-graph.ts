/**
 * A package's import graph as its sources write it (issue 33): every import and re-export,
 * type-only and dynamic ones included, since a type-only circle still ties two files together.
 * Read from the text of the sources, not from the compiler: the graph is what a reader sees.
 *
 * Files are named by their path under the package's `src/`; a file's folder is the first step of
 * that path (`backends/llama-cpp/model-file.ts` is in `backends`), `.` for the files at the top.
 * Two measures come out of it: import circles, files that import one another through any chain,
 * and imports that run back up the layers: the fewest imports that, taken away, leave the graph of
 * folders without a loop.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** One module a file imports: a file of the package, or a package by its name. */
export interface ImportTarget {
  /** A path under `src/`, or a package name (`@model-messages/protocol`, `node:fs`, `zod`). */
  module: string;
  /** True for a file of this package. */
  local: boolean;
}

/** Each file of the package (path under `src/`) and what it imports. */
export type ImportGraph = Map<string, ImportTarget[]>;

export interface ImportEdge {
  from: string;
  to: string;
}

/** Every `import ... from`, `export ... from`, bare `import '...'` and `import('...')`. */
const IMPORT = /^\s*(?:import|export)\b[^'";]*?\bfrom\s*'([^']+)'|^\s*import\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/gm;

/** Block comments, and line comments that take a whole line: prose may quote an import. */
const COMMENT = /\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm;

export function importGraph(sourceFolder: string): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of sourceFiles(sourceFolder)) {
    const targets = importSpecifiers(readFileSync(file, 'utf8')).map((specifier): ImportTarget =>
      specifier.startsWith('.')
        ? { module: relative(sourceFolder, sourceOf(resolve(dirname(file), specifier))), local: true }
        : { module: specifier, local: false },
    );
    graph.set(relative(sourceFolder, file), targets);
  }
  return graph;
}

/** The modules a source imports or re-exports, in its order; what its comments quote left out. */
export function importSpecifiers(source: string): string[] {
  return [...source.replace(COMMENT, '').matchAll(IMPORT)].map((match) => (match[1] ?? match[2] ?? match[3])!);
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((entry) => {
    const path = join(folder, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|mjs)$/.test(path) && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The source of an imported `.js` path: the `.ts` beside it where there is one. */
function sourceOf(path: string): string {
  const typescript = path.replace(/\.js$/, '.ts');
  if (existsSync(typescript)) return typescript;
  if (existsSync(path)) return path;
  throw new Error(`${path}: imported, but no such source`);
}

/** The folder a file is in: the first step of its path, `.` for the top. */
export function folderOf(file: string): string {
  const slash = file.indexOf('/');
  return slash < 0 ? '.' : file.slice(0, slash);
}

/** The imports of files of the package, each one edge. */
export function localEdges(graph: ImportGraph): ImportEdge[] {
  return [...graph].flatMap(([from, targets]) =>
    targets.filter((target) => target.local).map((target) => ({ from, to: target.module })),
  );
}

/** Files that import one another through some chain: each circle's files, sorted. */
export function importCircles(graph: ImportGraph): string[][] {
  const edges = localEdges(graph);
  const next = groupTargets(edges.map(({ from, to }) => [from, to]));
  const selfImports = edges.filter(({ from, to }) => from === to).map(({ from }) => [from]);
  const components = stronglyConnected([...graph.keys()], next).filter((component) => component.length > 1);
  return [...components, ...selfImports].map((component) => component.sort());
}

/** How many imports go from each folder to each other folder. */
export function folderImports(graph: ImportGraph): Map<string, Map<string, number>> {
  const counts = new Map<string, Map<string, number>>();
  for (const { from, to } of localEdges(graph)) {
    const source = folderOf(from);
    const target = folderOf(to);
    if (source === target) continue;
    const row = counts.get(source) ?? new Map<string, number>();
    row.set(target, (row.get(target) ?? 0) + 1);
    counts.set(source, row);
  }
  return counts;
}

/** Folders that import one another through some chain: each loop's folders, sorted. */
export function folderLoops(graph: ImportGraph): string[][] {
  const counts = folderImports(graph);
  const folders = [...new Set(localEdges(graph).flatMap(({ from, to }) => [folderOf(from), folderOf(to)]))];
  const next = new Map([...counts].map(([folder, row]) => [folder, [...row.keys()]]));
  return stronglyConnected(folders, next)
    .filter((component) => component.length > 1)
    .map((component) => component.sort());
}

export interface Layering {
  /** The folders of each loop, lowest first, in the order that leaves the fewest imports upward. */
  orders: string[][];
  /** The imports from a folder to one above it in that order: the fewest that make the loops. */
  upward: ImportEdge[];
}

/**
 * Imports that run back up the layers: for each loop of folders, the order of its folders that the
 * fewest imports go against, and those imports. Exact (a search over the subsets of a loop's
 * folders, which is quick for the twenty or so folders a package has).
 */
export function upwardImports(graph: ImportGraph): Layering {
  const counts = folderImports(graph);
  const weight = (from: string, to: string) => counts.get(from)?.get(to) ?? 0;
  const orders = folderLoops(graph).map((loop) => cheapestOrder(loop, weight));
  const rank = new Map(orders.flatMap((order) => order.map((folder, index) => [folder, index] as const)));
  const loopOf = new Map(orders.flatMap((order, loop) => order.map((folder) => [folder, loop] as const)));
  const upward = localEdges(graph).filter(({ from, to }) => {
    const source = folderOf(from);
    const target = folderOf(to);
    return loopOf.has(source) && loopOf.get(source) === loopOf.get(target) && rank.get(source)! < rank.get(target)!;
  });
  return { orders, upward };
}

/** The order of `folders`, lowest first, with the least weight of imports from a folder to a later one. */
function cheapestOrder(folders: readonly string[], weight: (from: string, to: string) => number): string[] {
  if (folders.length > 24) throw new Error(`a loop of ${folders.length} folders is too large to order exactly`);
  const all = (1 << folders.length) - 1;
  // cost[placed]: the least weight upward among the folders of `placed`, placed lowest first.
  const cost = new Array<number>(all + 1).fill(Number.POSITIVE_INFINITY);
  const last = new Array<number>(all + 1).fill(-1);
  cost[0] = 0;
  for (let placed = 0; placed <= all; placed += 1) {
    if (cost[placed] === Number.POSITIVE_INFINITY) continue;
    folders.forEach((folder, index) => {
      if (placed & (1 << index)) return;
      // `folder` goes above every placed one: the placed folders' imports of it run upward.
      let added = 0;
      folders.forEach((lower, lowerIndex) => {
        if (placed & (1 << lowerIndex)) added += weight(lower, folder);
      });
      const next = placed | (1 << index);
      if (cost[placed]! + added < cost[next]!) {
        cost[next] = cost[placed]! + added;
        last[next] = index;
      }
    });
  }
  const order: string[] = [];
  for (let placed = all; placed !== 0; placed &= ~(1 << last[placed]!)) order.unshift(folders[last[placed]!]!);
  return order;
}

function groupTargets(pairs: ReadonlyArray<readonly [string, string]>): Map<string, string[]> {
  const next = new Map<string, string[]>();
  for (const [from, to] of pairs) next.set(from, [...(next.get(from) ?? []), to]);
  return next;
}

/** Tarjan's strongly connected components, iteratively. */
function stronglyConnected(nodes: readonly string[], next: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: Array<{ node: string; child: number }> = [{ node: root, child: 0 }];
    index.set(root, counter);
    low.set(root, counter);
    counter += 1;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work.at(-1)!;
      const targets = next.get(frame.node) ?? [];
      if (frame.child < targets.length) {
        const target = targets[frame.child]!;
        frame.child += 1;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter);
          counter += 1;
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, child: 0 });
        } else if (onStack.has(target)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work.at(-1);
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}
