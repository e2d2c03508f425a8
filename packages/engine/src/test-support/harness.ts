// Shared set-up for the engine's real-runc tests: a fixed test home (so the base image is built
// once per machine and then reused), a test bridge/subnet/cgroup parent that cannot collide with
// a running platform, and the capability checks that decide whether to skip.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalEngine, type LocalEngineOptions } from '../local-engine.js';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = resolve(here, '../../../..');
export const SANDBOXD_BUNDLE = join(REPO_ROOT, 'packages/sandboxd/dist/sandboxd.bundle.mjs');
export const DEFAULT_TEST_HOME = '/var/cache/tarmac-test';

export const TEST_NETWORK = { bridge: 'tarmactest0', subnet: '10.201.0.0/16' };

/** Why the real-runc tests cannot run here, or null when they can. */
export function missingCapability(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not running as root';
  for (const [bin, what] of [
    ['runc', 'runc not installed'],
    ['ip', 'iproute2 not installed'],
    ['mmdebstrap', 'mmdebstrap not installed'],
    ['iptables', 'iptables not installed'],
    ['nft', 'nftables not installed'],
    ['mkfs.ext4', 'e2fsprogs not installed'],
  ] as const) {
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
    } catch {
      return what;
    }
  }
  if (!existsSync('/usr/bin/tini-static')) return 'tini-static not installed (Debian package tini)';
  return null;
}

/** Builds packages/sandboxd if its bundle is missing (tests may run before `npm run build`). */
export function ensureSandboxdBundle(): void {
  if (existsSync(SANDBOXD_BUNDLE)) return;
  execFileSync('npm', ['run', '-w', '@tarmac/sandboxd', 'build:bundle'], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
}

export function testEngine(
  home: string | undefined,
  overrides: Partial<LocalEngineOptions> = {},
): LocalEngine {
  return new LocalEngine({
    home: home ?? DEFAULT_TEST_HOME,
    runtime: {
      nodeBinary: process.execPath,
      tiniBinary: '/usr/bin/tini-static',
      sandboxdBundle: SANDBOXD_BUNDLE,
    },
    network: TEST_NETWORK,
    cgroupParent: 'tarmac-test',
    runcRoot: '/run/tarmac-test/runc',
    ...overrides,
  });
}

/** Unique ids per test run, so parallel files and leftovers of a crashed run never collide. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${process.pid.toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
}
