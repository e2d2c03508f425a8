// Issue 20 sections of bench/sandbox.ts:
//  - time to first command: POST /v0/sandboxes, then `echo hi` through the gateway's process API
//    until its output is back — from the warm pool (a pooled shape; the pool refilled between
//    samples, outside the measurement) and without it (the same image, a shape the pool does not
//    hold), against `podman run --rootfs` on the same Debian rootfs when podman is installed;
//    samples interleaved;
//  - the request after a 7-second pause vs the one just before it (back to back), paired, beside
//    the same for two bare Node hops (bare-relay.mjs in front of a trivial server): the host's share;
//  - what a pooled sandbox costs the host (its memory cgroup, frozen).
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readyPoolMembers } from '../tests/e2e/sandboxes/pool-support.js';
import type { RunningPlatform } from '../tests/e2e/support/platform.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** POST a sandbox, wait until it runs `echo hi`, return ms; `nameless` lets the platform name it. */
export async function firstCommand(
  p: RunningPlatform,
  spec: Record<string, unknown>,
  name?: string,
): Promise<{ ms: number; name: string; pooled: boolean }> {
  const t = performance.now();
  const res = await p.api('/v0/sandboxes', {
    method: 'POST',
    body: JSON.stringify({ metadata: name ? { name } : {}, spec }),
  });
  const body = (await res.json()) as {
    metadata: { name: string };
    status: string;
    events: { message: string }[];
  };
  if (!res.ok) throw new Error(`create: ${res.status} ${JSON.stringify(body)}`);
  const n = body.metadata.name;
  for (;;) {
    const r = await fetch(`${p.url}/${p.credentials.workspace}/sandboxes/${n}/process`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'echo hi', waitForCompletion: true }),
    });
    const out = (await r.json()) as { stdout?: string };
    if (r.ok && out.stdout?.trim() === 'hi') {
      return {
        ms: performance.now() - t,
        name: n,
        pooled: body.events[0]?.message.includes('warm pool') ?? false,
      };
    }
    if (r.status !== 503) throw new Error(`exec in ${n}: ${r.status} ${JSON.stringify(out)}`);
    await sleep(2);
  }
}

export { readyPoolMembers };

export async function waitPoolFull(home: string, size: number, legacy = false): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (readyPoolMembers(home, legacy).length < size) {
    if (Date.now() > deadline) throw new Error('the warm pool did not refill in 120 s');
    await sleep(50);
  }
}

/** Memory (MB) the ready pool members' cgroups hold (v1 or v2), per member (frozen or hot). */
export function poolMemberMemoryMB(home: string): number | undefined {
  const ids = readyPoolMembers(home);
  let total = 0;
  for (const id of ids) {
    const v1 = `/sys/fs/cgroup/memory/tarmac/${id}/memory.usage_in_bytes`;
    const v2 = `/sys/fs/cgroup/tarmac/${id}/memory.current`;
    const file = existsSync(v1) ? v1 : v2;
    if (!existsSync(file)) return undefined;
    total += Number(readFileSync(file, 'utf8'));
  }
  return ids.length > 0 ? total / ids.length / 2 ** 20 : undefined;
}

/** Why podman cannot be compared here, or undefined when it can. */
export function podmanMissing(): string | undefined {
  const r = spawnSync('sh', ['-c', 'command -v podman'], { encoding: 'utf8' });
  return r.status === 0 ? undefined : 'podman is not installed: the podman comparison is skipped';
}

/** `podman run --rm --rootfs <rootfs> echo hi`, ms (the same Debian rootfs the sandboxes run). */
export function podmanFirstCommand(rootfs: string): number {
  const t = performance.now();
  const out = execFileSync(
    'podman', // The sandboxes' descriptor and process limits: podman's defaults are above this host's hard ones.
    [
      'run',
      '--rm',
      '--network=none',
      '--ulimit',
      'nofile=4096:4096',
      '--ulimit',
      'nproc=4096:4096',
      '--rootfs',
      rootfs,
      'echo',
      'hi',
    ],
    {
      encoding: 'utf8',
    },
  );
  if (out.trim() !== 'hi') throw new Error(`podman said ${out}`);
  return performance.now() - t;
}

/** One timed request (ms), throwing unless it answered 2xx. */
export type Probe = () => Promise<number>;

const timedGet =
  (url: string, headers: Record<string, string> = {}): Probe =>
  async () => {
    const t = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: status ${res.status}`);
    return performance.now() - t;
  };

/** GET {sandbox}/health through the platform's gateway: client → platform → sandboxd. */
export function gatewayHealth(p: RunningPlatform, name: string): Probe {
  return timedGet(`${p.url}/${p.credentials.workspace}/sandboxes/${name}/health`, {
    authorization: `Bearer ${p.credentials.apiKey}`,
  });
}

/**
 * The same two hops with none of our code (the host's own cost of a request after a pause): a
 * trivial node:http server behind bench/support/bare-relay.mjs (Node's HTTP server and an undici
 * pool), each its own process, keep-alive 65 s like the platform's.
 */
export async function bareTwoHops(): Promise<{ probe: Probe; close(): void }> {
  const port = (child: ChildProcess) =>
    new Promise<number>((resolve, reject) => {
      child.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
      child.once('exit', (code) => reject(new Error(`bare hop exited (${code})`)));
    });
  const server = spawn(
    process.execPath,
    [
      '-e',
      `const s = require('node:http').createServer((q, r) => r.end('{"status":"ok"}')); s.keepAliveTimeout = 65000; s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const serverPort = await port(server);
  const relay = spawn(
    process.execPath,
    [
      new URL('./support/bare-relay.mjs', import.meta.url).pathname,
      `http://127.0.0.1:${serverPort}`,
      'Bearer x',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const relayPort = await port(relay).catch((err: unknown) => {
    server.kill();
    throw err;
  });
  return {
    probe: timedGet(`http://127.0.0.1:${relayPort}/health`),
    close() {
      relay.kill();
      server.kill();
    },
  };
}

/**
 * Pairs of (back-to-back request, request after `pauseMs` of silence), ms, per target. The
 * targets take the pauses in turn, so each pause's first request is that target's own.
 */
export async function pausePairs(
  targets: Record<string, Probe>,
  n: number,
  pauseMs: number,
): Promise<Record<string, { warm: number[]; afterPause: number[] }>> {
  const out: Record<string, { warm: number[]; afterPause: number[] }> = {};
  for (const [name, one] of Object.entries(targets)) {
    for (let i = 0; i < 20; i++) await one();
    out[name] = { warm: [], afterPause: [] };
  }
  for (let i = 0; i < n; i++) {
    for (const [name, one] of Object.entries(targets)) {
      await one();
      out[name]!.warm.push(await one());
      await sleep(pauseMs);
      out[name]!.afterPause.push(await one());
    }
  }
  return out;
}
