// Sandboxes on the real platform (issue 4), against the BUILT binary (npm run build first):
//  1. create-to-DEPLOYED: POST /v0/sandboxes until GET shows DEPLOYED (polled every 2 ms), image
//     cached; target < 150 ms median. Baseline in the same run: GET /v0/sandboxes/{name} (the
//     polling request itself), to show how much of the figure is the API round trip.
//  2. resume: latency of GET /health through the gateway to a STANDBY sandbox minus the same
//     request to the same sandbox once RUNNING, paired per sample; spec bound 25 ms, target p99
//     added < 5 ms. The RUNNING baseline is the third request: the second is printed apart, as
//     it can meet the resume's own bookkeeping (its record, written once the resuming request
//     is answered: planes/sandbox/controllers/standby.ts). A fourth request, paired with the
//     third, gives the same difference with no resume in it: the host's own tail, same run.
//  3. density: N sandboxes (default 200) created, left to fall into STANDBY; host memory per
//     sandbox (MemAvailable before vs after, and the sum of their memory cgroups), then every one
//     must answer /health (resumed). Everything is deleted afterwards.
//  0. (issue 20, bench/sandbox-first-command.ts) time to first command from the warm pool and
//     without it, against podman on the same rootfs when installed (FIRST=15 samples,
//     interleaved); the request after a 7-second pause vs back to back, beside two bare Node hops
//     (PAUSE_RUNS=15); the host memory of a pooled sandbox.
// Reports median, p99 and spread (min..max); ratios to the baseline where one applies.
//
//   node --import tsx bench/sandbox.ts            (RUNS=100 RESUME=100 DENSITY=200 MEMORY=4096)
//   SANDBOXD_CODE_CACHE=0 ...                     sandboxd without its code-cache loader (A/B)
//   BENCH_BRIDGE=… BENCH_SUBNET=…                 another bridge and subnet (runs beside another)
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { REPO_ROOT, removeHome, startPlatform, type RunningPlatform } from '../tests/e2e/support/platform.js';
import {
  firstCommand,
  bareTwoHops,
  gatewayHealth,
  pausePairs,
  podmanFirstCommand,
  podmanMissing,
  poolMemberMemoryMB,
  waitPoolFull,
} from './sandbox-first-command.js';

const RUNS = Number(process.env.RUNS ?? 100);
const RESUME = Number(process.env.RESUME ?? 100);
const DENSITY = Number(process.env.DENSITY ?? 200);
const IMAGE_DIR = process.env.TARMAC_TEST_IMAGE_DIR ?? '/var/cache/tarmac-test/images';
const FIRST = Number(process.env.FIRST ?? 15);
const PAUSE_RUNS = Number(process.env.PAUSE_RUNS ?? 15);
const POOL_SIZE = 2;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
};
const fmt = (xs: number[]) =>
  `median ${quantile(xs, 0.5).toFixed(2)} ms, p99 ${quantile(xs, 0.99).toFixed(2)} ms, spread ${Math.min(...xs).toFixed(2)}..${Math.max(...xs).toFixed(2)} ms (n=${xs.length})`;

async function ok(res: Response, what: string): Promise<unknown> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

interface View {
  status: string;
  state?: string;
  events: { type: string; message: string }[];
}

async function state(p: RunningPlatform, name: string): Promise<View> {
  return (await ok(await p.api(`/v0/sandboxes/${name}`), `GET ${name}`)) as View;
}

/** The controller's own split of start-up time, from the Deployment event's message. */
function breakdown(v: View): { container: number; sandboxd: number } | undefined {
  const e = v.events.find((x) => x.type === 'Deployment');
  const m = /container (\d+) ms, sandboxd ready (\d+) ms/.exec(e?.message ?? '');
  return m ? { container: Number(m[1]), sandboxd: Number(m[2]) } : undefined;
}

// Memory decides CPU too (memory/2048 cores, spec): the default 4096 MB gives 2 cores; at 256 MB
// (0.125 core) node's own start-up inside the sandbox takes ~8x longer.
const MEMORY = Number(process.env.MEMORY ?? 4096);

async function create(p: RunningPlatform, name: string, memory = MEMORY - 1): Promise<number> {
  const t = performance.now();
  await ok(
    await p.api('/v0/sandboxes', {
      method: 'POST',
      body: JSON.stringify({
        metadata: { name },
        spec: { runtime: { image: 'tarmac/base:latest', memory } },
      }),
    }),
    `create ${name}`,
  );
  for (;;) {
    const s = await state(p, name);
    if (s.status === 'DEPLOYED') return performance.now() - t;
    if (s.status === 'FAILED') throw new Error(`${name} FAILED: ${JSON.stringify(s)}`);
    await sleep(2);
  }
}

async function remove(p: RunningPlatform, names: string[], parallel = 8): Promise<void> {
  const queue = [...names];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let n = queue.shift(); n; n = queue.shift()) {
        await p.api(`/v0/sandboxes/${n}`, { method: 'DELETE' });
        while ((await state(p, n)).status !== 'TERMINATED') await sleep(20);
      }
    }),
  );
}

const health = (p: RunningPlatform, name: string) =>
  fetch(`${p.url}/${p.credentials.workspace}/sandboxes/${name}/health`, {
    headers: { authorization: `Bearer ${p.credentials.apiKey}` },
  });

async function timed(f: () => Promise<Response>): Promise<number> {
  const t = performance.now();
  const res = await f();
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`status ${res.status}`);
  return performance.now() - t;
}

/** Sum over this home's sandboxes of their memory cgroups (v1): charged bytes and resident (rss). */
function cgroupMemoryMB(home: string): { usage: number; rss: number } {
  let usage = 0;
  let rss = 0;
  for (const id of readdirSync(join(home, 'sandboxes'))) {
    const dir = `/sys/fs/cgroup/memory/tarmac/${id}`;
    if (!existsSync(dir)) continue;
    usage += Number(readFileSync(join(dir, 'memory.usage_in_bytes'), 'utf8'));
    const m = /^total_rss (\d+)$/m.exec(readFileSync(join(dir, 'memory.stat'), 'utf8'));
    rss += Number(m?.[1] ?? 0);
  }
  return { usage: usage / 2 ** 20, rss: rss / 2 ** 20 };
}

function memAvailableMB(): number {
  const m = /MemAvailable:\s+(\d+) kB/.exec(readFileSync('/proc/meminfo', 'utf8'));
  return Number(m?.[1]) / 1024;
}

/**
 * A private copy of the sandboxd bundle: a rebuild of packages/sandboxd during the run (a
 * developer's watch) must not change what the sandboxes start.
 */
function snapshotBundle(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tarmac-bench-sandboxd-'));
  const dist = join(REPO_ROOT, 'packages/sandboxd/dist');
  cpSync(join(dist, 'sandboxd.bundle.mjs'), join(dir, 'sandboxd.bundle.mjs'));
  if (existsSync(join(dist, 'lib'))) cpSync(join(dist, 'lib'), join(dir, 'lib'), { recursive: true });
  // A/B of sandboxd's code-cache loader in the same conditions: without lib/sandboxd-boot.cjs the
  // engine runs the ESM bundle (packages/engine ARCHITECTURE.md "Start-up").
  if (process.env.SANDBOXD_CODE_CACHE === '0') rmSync(join(dir, 'lib', 'sandboxd-boot.cjs'), { force: true });
  return join(dir, 'sandboxd.bundle.mjs');
}

async function main(): Promise<void> {
  const bundle = snapshotBundle();
  const p = await startPlatform({
    timeoutMs: 15 * 60_000,
    env: {
      TARMAC_IMAGE_DIR: IMAGE_DIR,
      TARMAC_BRIDGE: process.env.BENCH_BRIDGE ?? 'tarmacbench0',
      TARMAC_SUBNET: process.env.BENCH_SUBNET ?? '10.203.0.0/16',
      TARMAC_STANDBY_AFTER: '1s',
      TARMAC_SANDBOXD_BUNDLE: bundle,
      // The resume pool (10) and density (DENSITY) sandboxes of MEMORY MB each are idle: their
      // limits far exceed the host's memory, which the engine refuses by default (issue 19 item 13).
      TARMAC_MEMORY_OVERCOMMIT: '1000',
      // The warm pool holds MEMORY MB sandboxes of the base image; sections 1-3 create MEMORY - 1
      // MB ones (same CPU share to 0.05 %), which it does not hold, so they boot as before.
      TARMAC_POOL: `tarmac/base:latest@${MEMORY}=${POOL_SIZE}`,
    },
  });
  const made: string[] = [];
  try {
    // Warm-up: the base image and the runtime dir are built once, outside the measurement.
    made.push('warm');
    await create(p, 'warm');
    await remove(p, ['warm']);
    await firstCommandSection(p, made);

    // 1. create-to-DEPLOYED, one at a time.
    const createMs: number[] = [];
    const baseline: number[] = [];
    const containerMs: number[] = [];
    const sandboxdMs: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const name = `c-${i}`;
      createMs.push(await create(p, name));
      baseline.push(await timed(() => p.api(`/v0/sandboxes/${name}`)));
      const split = breakdown(await state(p, name));
      if (split) {
        containerMs.push(split.container);
        sandboxdMs.push(split.sandboxd);
      }
      await remove(p, [name], 1);
    }
    if (RUNS > 0) {
      console.log(`create-to-DEPLOYED: ${fmt(createMs)}`);
      if (containerMs.length > 0) {
        console.log(`  of which engine createSandbox (overlay, netns, runc run): ${fmt(containerMs)}`);
        console.log(`  of which sandboxd boot until /health answers: ${fmt(sandboxdMs)}`);
      }
      console.log(
        `  baseline GET /v0/sandboxes/{name}: ${fmt(baseline)}; ratio of medians ${(quantile(createMs, 0.5) / quantile(baseline, 0.5)).toFixed(1)}x`,
      );
    }

    // 2. resume: 10 sandboxes fall asleep together; each sample is one STANDBY request then the
    // same request RUNNING.
    const pool = Array.from({ length: RESUME > 0 ? 10 : 0 }, (_, i) => `r-${i}`);
    made.push(...pool);
    for (const n of pool) await create(p, n);
    const standbyMs: number[] = [];
    const runningMs: number[] = [];
    const afterMs: number[] = [];
    const added: number[] = [];
    // The same paired difference between two RUNNING requests (the fourth less the third): what
    // this host's scheduling alone puts in the tail of such a difference, in the same run.
    const nullPairs: number[] = [];
    while (standbyMs.length < RESUME) {
      for (const n of pool) while ((await state(p, n)).state !== 'STANDBY') await sleep(50);
      for (const n of pool) {
        if (standbyMs.length >= RESUME) break;
        const cold = await timed(() => health(p, n));
        const after = await timed(() => health(p, n));
        const warm = await timed(() => health(p, n));
        const again = await timed(() => health(p, n));
        standbyMs.push(cold);
        nullPairs.push(again - warm);
        afterMs.push(after);
        runningMs.push(warm);
        added.push(cold - warm);
      }
    }
    if (RESUME > 0) {
      console.log(`request to STANDBY sandbox: ${fmt(standbyMs)}`);
      console.log(`the request right after it (meets the resume's record write): ${fmt(afterMs)}`);
      console.log(`same request, RUNNING (baseline, the third): ${fmt(runningMs)}`);
      console.log(`resume added (paired difference): ${fmt(added)}  [spec bound 25 ms; target p99 < 5 ms]`);
      console.log(`  baseline, RUNNING vs RUNNING (the fourth less the third, paired): ${fmt(nullPairs)}`);
    }
    await remove(p, pool);

    // 2b. the request after a 7-second pause against the one before it (no STANDBY: 10 min).
    if (PAUSE_RUNS > 0) {
      await p.api('/v0/sandboxes/pause', { method: 'DELETE' });
      made.push('pause');
      const spec = { runtime: { image: 'tarmac/base:latest', memory: MEMORY - 1 } };
      await p.api('/v0/sandboxes', {
        method: 'POST',
        body: JSON.stringify({ metadata: { name: 'pause' }, spec }),
      });
      while ((await state(p, 'pause')).status !== 'DEPLOYED') await sleep(20);
      // STANDBY after 1 s in this run: keep the sandbox RUNNING with a keep-alive process.
      await fetch(`${p.url}/${p.credentials.workspace}/sandboxes/pause/process`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ command: 'sleep 100000', keepAlive: true, timeout: 0 }),
      });
      // Baseline in the same run: the same two hops with none of our code, pauses taken in turn.
      const bare = await bareTwoHops();
      let pairs: Awaited<ReturnType<typeof pausePairs>>;
      try {
        pairs = await pausePairs({ platform: gatewayHealth(p, 'pause'), bare: bare.probe }, PAUSE_RUNS, 7000);
      } finally {
        bare.close();
      }
      const added = (t: string) => pairs[t]!.afterPause.map((x, i) => x - (pairs[t]!.warm[i] ?? 0));
      console.log(`request back to back: ${fmt(pairs.platform!.warm)}`);
      console.log(`request after a 7 s pause: ${fmt(pairs.platform!.afterPause)}`);
      console.log(
        `  added by the pause (paired): ${fmt(added('platform'))}  [goal: within 0.5 ms at the median]`,
      );
      console.log(
        `  baseline, two bare Node hops (client → relay → server, loopback): back to back ${fmt(pairs.bare!.warm)}; added by the pause ${fmt(added('bare'))}`,
      );
      const ours = quantile(added('platform'), 0.5) - quantile(added('bare'), 0.5);
      console.log(`  the platform's own share (median added − bare median added): ${ours.toFixed(2)} ms`);
      await remove(p, ['pause']);
    }

    // 3. density.
    if (DENSITY === 0) return;
    const before = memAvailableMB();
    const dense = Array.from({ length: DENSITY }, (_, i) => `d-${i}`);
    made.push(...dense);
    const queue = [...dense];
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let n = queue.shift(); n; n = queue.shift()) await create(p, n);
      }),
    );
    console.log(
      `density: ${DENSITY} sandboxes DEPLOYED in ${((performance.now() - t0) / 1000).toFixed(1)} s (4 at a time)`,
    );
    for (const n of dense) while ((await state(p, n)).state !== 'STANDBY') await sleep(100);
    await sleep(2000);
    const after = memAvailableMB();
    const cg = cgroupMemoryMB(p.home);
    console.log(
      `  memory cgroups of the ${DENSITY}: ${(cg.usage / DENSITY).toFixed(1)} MB charged (rss ${(cg.rss / DENSITY).toFixed(1)} MB) per sandbox`,
    );
    console.log(
      `  all ${DENSITY} in STANDBY; host MemAvailable ${before.toFixed(0)} -> ${after.toFixed(0)} MB: ${((before - after) / DENSITY).toFixed(1)} MB per sandbox`,
    );
    const answers = await Promise.all(dense.map((n) => health(p, n).then((r) => r.status)));
    const good = answers.filter((s) => s === 200).length;
    console.log(`  /health after STANDBY: ${good}/${DENSITY} answered 200`);
    if (good !== DENSITY) process.exitCode = 1;
  } finally {
    const left = [];
    for (const n of made) {
      const res = await p.api(`/v0/sandboxes/${n}`);
      if (res.ok && ((await res.json()) as { status: string }).status !== 'TERMINATED') left.push(n);
    }
    await remove(p, left);
    await p.stop();
    removeHome(p.home);
    rmSync(dirname(bundle), { recursive: true, force: true }); // the sandboxd copy, once nothing runs it
  }
}

/** Section 0 (issue 20): time to first command, pool vs no pool vs podman, interleaved. */
async function firstCommandSection(p: RunningPlatform, made: string[]): Promise<void> {
  if (FIRST <= 0) return;
  const podmanWhyNot = podmanMissing();
  if (podmanWhyNot) console.log(podmanWhyNot);
  const rootfs = join(IMAGE_DIR, encodeURIComponent('tarmac/base:latest'), 'layers');
  const pooled: number[] = [];
  const booted: number[] = [];
  const podman: number[] = [];
  await waitPoolFull(p.home, POOL_SIZE);
  const memberMB = poolMemberMemoryMB(p.home);
  for (let i = 0; i < FIRST; i++) {
    if (!podmanWhyNot) podman.push(podmanFirstCommand(join(rootfs, readdirSync(rootfs)[0] ?? '')));
    const b = await firstCommand(
      p,
      { runtime: { image: 'tarmac/base:latest', memory: MEMORY - 1 } },
      `fc-${i}`,
    );
    made.push(b.name);
    booted.push(b.ms);
    await waitPoolFull(p.home, POOL_SIZE); // refills happen outside the measurement
    const w = await firstCommand(p, { runtime: { image: 'tarmac/base:latest', memory: MEMORY } });
    if (!w.pooled) throw new Error(`${w.name} was not served from the pool`);
    made.push(w.name);
    pooled.push(w.ms);
    await remove(p, [b.name, w.name]);
  }
  console.log(`time to first command, from the warm pool: ${fmt(pooled)}  [goal: median < 20 ms]`);
  console.log(`time to first command, booted (no pool): ${fmt(booted)}`);
  console.log(
    `  ratio of medians, booted / pool: ${(quantile(booted, 0.5) / quantile(pooled, 0.5)).toFixed(2)}x`,
  );
  if (podman.length > 0) {
    console.log(`time to first command, podman run --rootfs (same rootfs): ${fmt(podman)}`);
    console.log(
      // Two decimals: at one, 9.95x printed as "10.0x" and read as the goal met.
      `  ratio of medians, podman / pool: ${(quantile(podman, 0.5) / quantile(pooled, 0.5)).toFixed(2)}x  [goal >= 10x]`,
    );
  }
  if (memberMB !== undefined)
    console.log(`host memory of a ready pooled sandbox (frozen or hot): ${memberMB.toFixed(1)} MB`);
}

await main();
