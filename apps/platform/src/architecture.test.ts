// The import graph of apps/platform/src, checked (issue 13 "What it must show"): files are nodes,
// relative imports (type-only ones too) are edges, tests and test support are left out. The layers
// are those of ARCHITECTURE.md beside src/: framework/ < planes/<plane>/ < the composition root
// (the files at the top of src/ and home/). The test fails on any import loop, on any import
// between two planes, on an upward import other than the one ARCHITECTURE.md explains, and on a
// folder the map does not list.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));
const MAP = join(SRC, '..', 'ARCHITECTURE.md');

/** Upward imports the map explains ("The one upward import"); at most one may exist. */
const EXPLAINED_UPWARD: readonly string[] = [];

const isTestFile = (path: string) => /\.test\.ts$/.test(path) || /(^|\/)test-support(\/|\.ts$)/.test(path);

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (name.endsWith('.ts') && !isTestFile(relative(SRC, path))) out.push(path);
  }
  return out;
}

// `from '…'`, `import '…'`, `import('…')` and `export … from '…'`, relative specifiers only.
const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

export interface ImportGraph {
  nodes: string[];
  edges: Array<[from: string, to: string]>;
}

export function importGraph(): ImportGraph {
  const nodes = sourceFiles(SRC).map((p) => relative(SRC, p));
  const edges: Array<[string, string]> = [];
  for (const node of nodes) {
    const text = readFileSync(join(SRC, node), 'utf8');
    for (const match of text.matchAll(IMPORT)) {
      const target = resolve(SRC, dirname(node), match[1]!).replace(/\.js$/, '.ts');
      if (!existsSync(target)) throw new Error(`${node}: import ${match[1]} does not resolve`);
      edges.push([node, relative(SRC, target)]);
    }
  }
  return { nodes, edges };
}

/** 0 = framework, 1 = a plane, 2 = the composition root. */
export function layerOf(file: string): { rank: 0 | 1 | 2; plane?: string } {
  const [top, second] = file.split('/');
  if (top === 'framework') return { rank: 0 };
  if (top === 'planes' && second) return { rank: 1, plane: second };
  return { rank: 2 };
}

/** Strongly connected components with more than one file (Tarjan), i.e. the import loops. */
export function importLoops({ nodes, edges }: ImportGraph): string[][] {
  const next = new Map<string, string[]>(nodes.map((n) => [n, []]));
  for (const [from, to] of edges) next.get(from)?.push(to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (next.get(v) ?? []).includes(v)) loops.push(component.sort());
    }
  };
  for (const n of nodes) if (!index.has(n)) visit(n);
  return loops;
}

const upward = (g: ImportGraph) => g.edges.filter(([a, b]) => layerOf(a).rank < layerOf(b).rank);
const crossPlane = (g: ImportGraph) =>
  g.edges.filter(([a, b]) => {
    const [la, lb] = [layerOf(a), layerOf(b)];
    return la.plane !== undefined && lb.plane !== undefined && la.plane !== lb.plane;
  });

describe('apps/platform import graph', () => {
  const graph = importGraph();

  it('has no import loops', () => {
    expect(importLoops(graph)).toEqual([]);
  });

  it('has no import from one plane into another (they meet only in the composition root)', () => {
    expect(crossPlane(graph).map(([a, b]) => `${a} -> ${b}`)).toEqual([]);
  });

  it('has at most one upward import, and that one is explained in the map', () => {
    const found = upward(graph).map(([a, b]) => `${a} -> ${b}`);
    expect(found.length).toBeLessThanOrEqual(1);
    expect(found).toEqual(EXPLAINED_UPWARD);
    const map = readFileSync(MAP, 'utf8');
    for (const edge of EXPLAINED_UPWARD) expect(map).toContain(edge);
  });

  it('is measured (numbers for the closing note)', () => {
    const summary = {
      files: graph.nodes.length,
      imports: graph.edges.length,
      loops: importLoops(graph).length,
      upward: upward(graph).length,
      crossPlane: crossPlane(graph).length,
    };
    console.log(`import graph of apps/platform/src: ${JSON.stringify(summary)}`);
    expect(summary.files).toBeGreaterThan(50);
  });
});

describe('apps/platform/ARCHITECTURE.md', () => {
  it('has one line for every folder of src/ and names no folder that is gone', () => {
    const map = readFileSync(MAP, 'utf8');
    const folders: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (!statSync(path).isDirectory() || name === 'test-support') continue;
        folders.push(relative(SRC, path));
        walk(path);
      }
    };
    walk(SRC);
    const listed = [...map.matchAll(/^\|\s*`src\/([^`]*?)\/?`\s*\|/gm)].map((m) => m[1]!);
    expect(listed.filter((f) => f !== '' && !folders.includes(f))).toEqual([]);
    expect(folders.filter((f) => !listed.includes(f))).toEqual([]);
  });
});
