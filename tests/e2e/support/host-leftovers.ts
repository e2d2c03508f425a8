// What an end-to-end run may leave on the host, and whose it is (issue 14 item 9: `scripts/test.sh`
// left ~15 bridges, ~400 iptables lines and homes behind). Other runs (other checkouts, a
// developer's platform) share this host at the same time, so a plain before/after diff would blame
// us for their objects: only objects named after the bridges and /16s that the run's test files
// (and the support files they import) name are compared, and only the default bridge is left out
// (tarmac0 on 10.200.0.0/16: every platform started without TARMAC_BRIDGE shares it, ours or not).
// Homes, loop devices and mounts are ours when under the run's own TMPDIR (leak-check.global.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export interface RunNames {
  bridges: string[];
  subnets: string[];
}

const DEFAULT_BRIDGE = 'tarmac0';
const DEFAULT_SUBNET = '10.200.0.0/16';

/** Bridge names and /16s named by string literals in `files` and the relative modules they import. */
export function runNames(files: string[]): RunNames {
  const bridges = new Set<string>();
  const subnets = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string, depth: number) => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:TARMAC_BRIDGE|bridge)\s*:\s*['"`]([A-Za-z0-9_-]{1,15})['"`]/g))
      bridges.add(m[1]!);
    for (const m of text.matchAll(/['"`](10\.\d{1,3}\.0\.0\/16)['"`]/g)) subnets.add(m[1]!);
    if (depth > 0)
      for (const m of text.matchAll(/from '(\.{1,2}\/[^']+)\.js'/g))
        visit(resolve(dirname(file), `${m[1]!}.ts`), depth - 1);
  };
  for (const file of files) visit(file, 2);
  bridges.delete(DEFAULT_BRIDGE);
  subnets.delete(DEFAULT_SUBNET);
  return { bridges: [...bridges].sort(), subnets: [...subnets].sort() };
}

export interface HostState {
  links: string[];
  iptables: string[];
  nftTables: string[];
  netns: Record<string, string>;
  loops: string[];
  mounts: string[];
  tmpEntries: string[];
}

const run = (cmd: string, args: string[]) => {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
};

/** Whether a line names one of the bridges (or its nft table) or an address in one of the /16s. */
export function mentions(names: RunNames, line: string): boolean {
  return (
    names.bridges.some((b) =>
      new RegExp(`(^|[^A-Za-z0-9_-])(TARMAC-IN-|tarmac_)?${b}([^A-Za-z0-9_-]|$)`).test(line),
    ) || names.subnets.some((s) => line.includes(` ${s.split('.').slice(0, 2).join('.')}.`))
  );
}

/** Every *.test.ts under `dir`. */
export function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The host objects that match `names` (or live under `tmp`), as comparable lines. */
export function hostState(names: RunNames, tmp: string): HostState {
  const mentionsOurs = (line: string) => mentions(names, ` ${line}`);
  const links = run('ip', ['-o', 'link', 'show'])
    .split('\n')
    .map((l) => /^\d+:\s+([^:@]+)/.exec(l)?.[1] ?? '')
    .filter((name) => names.bridges.includes(name));
  // A bridge that stays (made before its engine recorded creating it, or still in use) keeps its
  // chain, which each platform start rewrites with that platform's proxy ports (bounded: the
  // shared range and the ports its home handed out). Those allow lines say which platform ran
  // last, not that something leaked: compared as one line per chain.
  const iptables = run('iptables-save', [])
    .split('\n')
    .filter((l) => !l.startsWith('#') && mentionsOurs(l))
    .map((l) => l.replace(/\[\d+:\d+\]/g, ''))
    .map((l) => (/^-A TARMAC-IN-/.test(l) ? l.replace(/--dport \d+/, '--dport (any)') : l))
    .filter((l, i, all) => !l.includes('--dport (any)') || all.indexOf(l) === i);
  const nftTables = run('nft', ['list', 'tables'])
    .split('\n')
    .filter((l) => names.bridges.some((b) => l.endsWith(` tarmac_${b.replace(/[^A-Za-z0-9_]/g, '_')}`)));
  // A namespace is ours when it holds an address in one of our subnets.
  const netns: Record<string, string> = {};
  for (const line of run('ip', ['netns', 'list']).split('\n')) {
    const name = line.split(' ')[0];
    if (!name) continue;
    const addrs = run('ip', ['-n', name, '-o', '-4', 'addr', 'show']);
    if (names.subnets.some((s) => addrs.includes(` ${s.split('.').slice(0, 2).join('.')}.`)))
      netns[name] = addrs;
  }
  const loops = run('losetup', ['-a'])
    .split('\n')
    .filter((l) => l.includes(tmp));
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .filter((l) => l.includes(tmp));
  const tmpEntries = existsSync(tmp) ? readdirSync(tmp).map((e) => join(tmp, e)) : [];
  return { links, iptables, nftTables, netns, loops, mounts, tmpEntries };
}

/** What `after` has that `before` had not (multiset difference for lines), as readable strings. */
export function leftovers(before: HostState, after: HostState): string[] {
  const added = (a: string[], b: string[]) => {
    const counts = new Map<string, number>();
    for (const x of a) counts.set(x, (counts.get(x) ?? 0) + 1);
    return b.filter((x) => {
      const n = counts.get(x) ?? 0;
      if (n > 0) counts.set(x, n - 1);
      return n === 0;
    });
  };
  return [
    ...added(before.links, after.links).map((l) => `bridge ${l}`),
    ...added(before.iptables, after.iptables).map((l) => `iptables ${l}`),
    ...added(before.nftTables, after.nftTables).map((l) => `nft ${l}`),
    ...added(Object.keys(before.netns), Object.keys(after.netns)).map(
      (n) => `netns ${n}: ${after.netns[n]?.replace(/\s+/g, ' ')}`,
    ),
    ...added(before.loops, after.loops).map((l) => `loop ${l}`),
    ...added(before.mounts, after.mounts).map((l) => `mount ${l}`),
    ...added(before.tmpEntries, after.tmpEntries).map((e) => `left in TMPDIR: ${e}`),
  ];
}
