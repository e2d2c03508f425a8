// Shared set-up of the sandbox end-to-end tests: the built platform with one base-image cache for
// every home (only the first run on a machine builds it), its own bridge/subnet so a developer's
// running platform is never touched, helpers that speak the management API and the sandbox
// gateway, and a leak check that nothing (runc state, mounts, netns, veths) outlives a test file.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  removeHome,
  startPlatform,
  tempHome,
  type RunningPlatform,
  type StartOptions,
} from '../support/platform.js';

/** The image cache shared by the engine tests and these (packages/engine test-support). */
export const IMAGE_CACHE = process.env.TARMAC_TEST_IMAGE_DIR ?? '/var/cache/tarmac-test/images';
export const E2E_NETWORK = { TARMAC_BRIDGE: 'tarmace2e0', TARMAC_SUBNET: '10.202.0.0/16' };
export const RUNC_ROOT = '/run/tarmac/runc';

/** Why real sandboxes cannot run here, or null when they can. */
/**
 * What tests that build images need: the sandbox engine's tools and buildah (the builds plane).
 * `why` says which test needs the build, for the skip message.
 */
export function missingBuildCapability(why = 'these tests build images'): string | null {
  const base = missingCapability();
  if (base) return base;
  try {
    execFileSync('buildah', ['--version'], { stdio: 'ignore' });
  } catch {
    return `buildah not installed (scripts/engine-install.sh): ${why}`;
  }
  return null;
}

export function missingCapability(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not running as root';
  for (const bin of ['runc', 'ip', 'mmdebstrap', 'iptables', 'nft', 'mkfs.ext4']) {
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
    } catch {
      return `${bin} not installed (scripts/engine-install.sh)`;
    }
  }
  if (!existsSync('/usr/bin/tini-static')) return 'tini-static not installed (Debian package tini)';
  return null;
}

export function startSandboxPlatform(options: StartOptions = {}): Promise<RunningPlatform> {
  return startPlatform({
    ...options,
    timeoutMs: 15 * 60_000, // the very first run on a machine builds the base image
    env: { TARMAC_IMAGE_DIR: IMAGE_CACHE, ...E2E_NETWORK, ...options.env },
  });
}

export interface SandboxView {
  metadata: { name: string; url?: string };
  spec: Record<string, unknown>;
  status: string;
  state?: string;
  expiresIn?: number;
  lastUsedAt?: string;
  events: { type: string; status: string; message: string; time: string }[];
}

export async function json<T>(res: Response): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`not JSON (${res.status}): ${text.slice(0, 500)}`);
  }
}

export async function getSandbox(p: RunningPlatform, name: string): Promise<SandboxView> {
  const res = await p.api(`/v0/sandboxes/${name}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return json<SandboxView>(res);
}

export async function waitFor<T>(what: string, f: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function waitSandbox(
  p: RunningPlatform,
  name: string,
  ok: (s: SandboxView) => boolean,
  what: string,
  ms = 30_000,
): Promise<SandboxView> {
  return waitFor(
    what,
    async () => {
      const s = await getSandbox(p, name);
      return ok(s) ? s : undefined;
    },
    ms,
  );
}

/** POST /v0/sandboxes and wait for DEPLOYED (fails with the events when it FAILED). */
export async function createSandbox(
  p: RunningPlatform,
  name: string,
  spec: Record<string, unknown> = {},
  runtime: Record<string, unknown> = {},
): Promise<SandboxView> {
  const res = await p.api('/v0/sandboxes', {
    method: 'POST',
    body: JSON.stringify({
      metadata: { name },
      spec: { ...spec, runtime: { image: 'blaxel/base-image:latest', memory: 512, ...runtime } },
    }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const s = await waitSandbox(
    p,
    name,
    (x) => x.status === 'DEPLOYED' || x.status === 'FAILED',
    `${name} DEPLOYED`,
  );
  expect(s.status, JSON.stringify(s.events)).toBe('DEPLOYED');
  return s;
}

export async function deleteSandbox(p: RunningPlatform, name: string): Promise<void> {
  const res = await p.api(`/v0/sandboxes/${name}`, { method: 'DELETE' });
  if (res.status === 404) return;
  expect(res.status, await res.clone().text()).toBe(200);
  await waitSandbox(p, name, (s) => s.status === 'TERMINATED', `${name} TERMINATED`, 60_000);
}

/** A request to the sandbox's API through the gateway, path-style `{run_url}/{ws}/sandboxes/{name}`. */
export function sbx(
  p: RunningPlatform,
  name: string,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${p.credentials.apiKey}`);
  if (init.body !== undefined && !headers.has('content-type'))
    headers.set('content-type', 'application/json');
  return fetch(`${p.url}/${p.credentials.workspace}/sandboxes/${name}${path}`, { ...init, headers });
}

export interface ExecResult {
  exitCode: number;
  stdout: string | null;
  stderr: string | null;
  status: string;
}

/** Runs a shell command in the sandbox through sandboxd's process API and waits for it. */
export async function exec(
  p: RunningPlatform,
  name: string,
  command: string,
  extra: Record<string, unknown> = {},
): Promise<ExecResult> {
  const res = await sbx(p, name, '/process', {
    method: 'POST',
    body: JSON.stringify({ command, waitForCompletion: true, timeout: 60, ...extra }),
  });
  const body = await json<ExecResult>(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** Starts a background process (no wait). */
export async function spawnProcess(
  p: RunningPlatform,
  name: string,
  command: string,
  extra: Record<string, unknown> = {},
) {
  const res = await sbx(p, name, '/process', { method: 'POST', body: JSON.stringify({ command, ...extra }) });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** Engine ids of the sandboxes this platform home holds right now (for leak checks). */
export function engineIds(home: string): string[] {
  const dir = join(home, 'sandboxes');
  return existsSync(dir) ? readdirSync(dir).filter((d) => !d.startsWith('.')) : [];
}

/**
 * A file the sandbox wrote, read on the host from its overlay upper dir (on the sandbox's own
 * disk, packages/engine sandbox-disk.ts) without touching the sandbox.
 */
export function upperFile(home: string, engineId: string, path: string): string | undefined {
  const file = join(home, 'sandboxes', engineId, 'disk', 'upper', path);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** Everything a deleted sandbox could leave behind on the host; [] is clean. */
export function hostLeftovers(ids: string[]): string[] {
  const left: string[] = [];
  const netns = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  const links = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' });
  const mounts = readFileSync('/proc/self/mounts', 'utf8');
  // The bridge-port pins (engine port-filter.ts), in whichever bridge's table they are.
  const pins = execFileSync('nft', ['list', 'ruleset', 'bridge'], { encoding: 'utf8' });
  for (const id of ids) {
    if (existsSync(join(RUNC_ROOT, id))) left.push(`runc ${id}`);
    if (netns.includes(`tarmac-${id}`)) left.push(`netns ${id}`);
    const veth = `tv${createHash('sha256').update(id).digest('hex').slice(0, 12)}`;
    if (links.includes(veth)) left.push(`veth ${veth}`);
    if (pins.includes(`"${veth}"`)) left.push(`pin ${veth}`);
    if (mounts.includes(`/sandboxes/${id}/`)) left.push(`mount ${id}`);
    // /run/tarmac/rootfs/<id> and /run/tarmac/sysfs/<id> (packages/engine run-mounts.ts)
    if (mounts.includes(`/rootfs/${id} `)) left.push(`root mount ${id}`);
    if (mounts.includes(`/sysfs/${id} `)) left.push(`sysfs mount ${id}`);
  }
  return left;
}

/** afterAll: delete what the test made (even after a failure), stop the platform, check for leaks. */
export async function cleanUp(
  p: RunningPlatform | undefined,
  names: string[],
  volumes: string[] = [],
): Promise<void> {
  if (!p) return;
  const ids = engineIds(p.home);
  for (const name of names) await deleteSandbox(p, name).catch(() => undefined);
  for (const v of volumes) await p.api(`/v0/volumes/${v}`, { method: 'DELETE' }).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 3500)); // one resync frees volume storage
  await p.stop();
  expect(hostLeftovers(ids)).toEqual([]);
  expect(engineIds(p.home)).toEqual([]);
  // Volume loop mounts included: nothing under this home is mounted any more.
  expect(
    readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .filter((l) => l.includes(p.home)),
  ).toEqual([]);
  removeHome(p.home);
}

export { removeHome, tempHome };
