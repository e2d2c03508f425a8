// A sandbox's own environment (issue 20: a warm-pool sandbox must be, from inside, the sandbox a
// boot for its name makes). It is not the container's process env: PID 1 (tini), the supervisor
// and sandboxd's node start with the image's env only, identical in every sandbox of an image, so
// /proc/1/environ shows nothing of a sandbox — not its name, its envs, its secrets, nor whether it
// was pooled. What is the sandbox's (HOSTNAME, the spec's env: the platform's egress variables and
// sandboxd token, the user's envs) is a JSON file in the sandbox's bundle dir, bind-mounted read-only
// at BOOT_ENV_PATH (root only, 0600), which sandboxd reads at start (`--boot-env`) and hands to
// the processes it starts. The warm pool's claim rewrites the file in place (a bind mount follows
// the inode) to what a boot for the claimed name writes, so a restarted sandboxd, or root reading
// it, finds the sandbox it now is.
import { chownSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOXD_ONLY } from './sandboxd-env.js';
import type { IdRange } from './userns.js';

/** Where sandboxd finds the file in the sandbox: /dev is the container's own tmpfs. */
export const BOOT_ENV_PATH = '/dev/.tarmac-boot-env.json';

/** The file on the host, in the sandbox's bundle directory (bundle-dirs.ts: tmpfs). */
export const bootEnvFile = (bundleDir: string) => join(bundleDir, 'boot-env.json');

/** HOSTNAME first, then the spec's env: the order processes see them in. */
export function bootEnv(hostname: string, env: Record<string, string>): Record<string, string> {
  return { HOSTNAME: hostname, ...env };
}

/** Writes (or rewrites, keeping the inode the sandbox's bind mount holds) the file, root's only. */
export function writeBootEnv(file: string, env: Record<string, string>, ids: IdRange): void {
  writeFileSync(file, JSON.stringify(env), { mode: 0o600 });
  chownSync(file, ids.base, ids.base);
}

export function readBootEnv(file: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch {
    return {}; // a sandbox made before boot files: its env is in its process env
  }
}

/**
 * The claimed sandbox's file (issue 20): what `bootEnv(hostname, env)` of a boot for that name
 * holds. The pooled boot's own variables go (its HOSTNAME, the pool flag); the platform's ones it
 * was booted with stay (they derive from the record id the claim keeps), then the claim's.
 */
export function claimedBootEnv(
  booted: Record<string, string>,
  hostname: string,
  claim: Record<string, string>,
): Record<string, string> {
  const { HOSTNAME: _h, TARMAC_SANDBOXD_POOLED: _p, ...kept } = booted;
  return bootEnv(hostname, { ...kept, ...claim });
}

/** `--env` arguments giving a `runc exec` the env sandboxd's processes get, sandboxd's own blanked. */
export function bootEnvArgs(env: Record<string, string>): string[] {
  const args: string[] = [];
  for (const [k, v] of Object.entries(env)) {
    args.push('--env', (SANDBOXD_ONLY as readonly string[]).includes(k) ? `${k}=` : `${k}=${v}`);
  }
  return args;
}
