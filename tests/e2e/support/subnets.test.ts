// Test files leave their bridges up between runs, and two bridges on one /16 make the host route
// that subnet through whichever came first: a file whose subnet another file also uses finds its
// sandboxes unreachable ("health not ready") depending on the order files ran in. Every test file
// that names a /16 of its own must name a different one.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from './platform.js';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'dist' ? [] : sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

describe('test subnets', () => {
  it('no two test files put a bridge on the same /16', () => {
    const users = new Map<string, Set<string>>();
    const roots = ['tests/e2e', 'packages', 'apps'].map((d) => join(REPO_ROOT, d));
    for (const file of roots.flatMap(sources)) {
      const rel = relative(REPO_ROOT, file);
      if (!/\.test\.ts$|support|fixture|harness/.test(rel) || rel.endsWith('subnets.test.ts')) continue;
      for (const m of readFileSync(file, 'utf8').matchAll(/['"`](10\.(\d{1,3})\.0\.0\/16)['"`]/g)) {
        // String literals only (comments may cite examples); 10.200.0.0/16 is the platform's default (named by config docs and tests of it).
        if (m[2] === '200') continue;
        const subnet = m[1]!;
        const set = users.get(subnet) ?? new Set<string>();
        set.add(rel);
        users.set(subnet, set);
      }
    }
    const shared = [...users]
      .filter(([, files]) => files.size > 1)
      .map(([s, f]) => `${s}: ${[...f].join(', ')}`);
    expect(users.size).toBeGreaterThan(5); // the scan found the test files' subnets at all
    expect(shared).toEqual([]);
  });
});
