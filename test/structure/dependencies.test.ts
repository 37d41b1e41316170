import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');

interface Cruised {
  modules: Array<{ source: string; dependencies: Array<{ resolved: string; coreModule: boolean; couldNotResolve: boolean }> }>;
  summary: { violations: Array<{ rule: { name: string }; from: string; to: string; cycle?: Array<{ name: string }> }> };
}

/** dependency-cruiser over src/ with the repository's rules (.dependency-cruiser.cjs), as JSON. */
function cruise(): Cruised {
  const out = execFileSync(
    process.execPath,
    [
      join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
      'src',
      '--config',
      '.dependency-cruiser.cjs',
      '--output-type',
      'json',
    ],
    {
      cwd: ROOT,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return JSON.parse(out) as Cruised;
}

/** The module a file belongs to: `modules/<name>` for the domain, else its top-level folder or file. */
const moduleOf = (file: string): string => {
  const p = file.split('/');
  return p[1] === 'modules' ? `modules/${p[2]}` : p[1]!;
};

/** Groups of modules that import each other, directly or around a loop (Tarjan's strongly connected components). */
function moduleCycles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        onStack.delete(w);
        group.push(w);
        if (w === v) break;
      }
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('The module structure', () => {
  const result = cruise();

  it('should break none of the import rules: no file cycles, the domain free of transports and storage, lib at the bottom', () => {
    const lines = result.summary.violations.map(
      (v) => `${v.rule.name}: ${v.from} → ${v.cycle ? v.cycle.map((c) => c.name).join(' → ') : v.to}`,
    );
    assert.deepEqual(lines, []);
  });

  it('should have no cycle between modules (folders), even through different files', () => {
    const edges = new Map<string, Set<string>>();
    for (const m of result.modules) {
      if (!m.source.startsWith('src/')) continue;
      const from = moduleOf(m.source);
      for (const d of m.dependencies) {
        if (d.coreModule || d.couldNotResolve || !d.resolved.startsWith('src/')) continue;
        const to = moduleOf(d.resolved);
        if (to !== from) (edges.get(from) ?? edges.set(from, new Set()).get(from)!).add(to);
      }
    }
    assert.ok(edges.size > 10, 'the graph was read');
    assert.deepEqual(moduleCycles(edges), []);
  });
});
