// Before/after of the sandbox hot paths in ONE run (issue 19: "bench/sandbox.ts before/after for
// create-to-DEPLOYED, resume and exec in one run"; issue 13: the layout must not be slower): two
// platforms side by side on this machine, A = a baseline checkout (BASELINE_REPO, built with
// `npm run build`), B = this repository's build; every sample is taken on both, alternating which
// goes first, so load drifts hit both alike. Measured, through the real API and gateway:
//   1. create-to-DEPLOYED (POST, then GET polled every 2 ms), image cached;
//   2. exec round trip: POST /process {command: "echo hi", waitForCompletion: true};
//   3. resume added: a request to a sandbox in STANDBY minus the same request once RUNNING.
// Prints median, p99 and spread for A and B and the ratio B/A of the medians.
//
//   BASELINE_REPO=/path/to/old/checkout node --import tsx bench/sandbox-ab.ts   (RUNS=30 EXEC=100 RESUME=30)
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { startPlatform, type RunningPlatform } from '../tests/e2e/support/platform.js';

const RUNS = Number(process.env.RUNS ?? 30);
const EXEC = Number(process.env.EXEC ?? 100);
const RESUME = Number(process.env.RESUME ?? 30);
const MEMORY = Number(process.env.MEMORY ?? 4096);
const IMAGE_DIR = process.env.TARMAC_TEST_IMAGE_DIR ?? '/var/cache/tarmac-test/images';
const BASELINE = process.env.BASELINE_REPO;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
};
const fmt = (xs: number[]) =>
  `median ${quantile(xs, 0.5).toFixed(2)} ms, p99 ${quantile(xs, 0.99).toFixed(2)} ms, spread ${Math.min(...xs).toFixed(2)}..${Math.max(...xs).toFixed(2)} (n=${xs.length})`;

interface Side {
  label: string;
  p: RunningPlatform;
}

async function ok(res: Response, what: string): Promise<unknown> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

const view = async (p: RunningPlatform, name: string) =>
  (await ok(await p.api(`/v0/sandboxes/${name}`), `GET ${name}`)) as { status: string; state?: string };

async function create(p: RunningPlatform, name: string): Promise<number> {
  const t = performance.now();
  const body = { metadata: { name }, spec: { runtime: { image: 'tarmac/base:latest', memory: MEMORY } } };
  await ok(await p.api('/v0/sandboxes', { method: 'POST', body: JSON.stringify(body) }), `create ${name}`);
  for (;;) {
    const s = await view(p, name);
    if (s.status === 'DEPLOYED') return performance.now() - t;
    if (s.status === 'FAILED') throw new Error(`${name} FAILED`);
    await sleep(2);
  }
}

async function remove(p: RunningPlatform, name: string): Promise<void> {
  await p.api(`/v0/sandboxes/${name}`, { method: 'DELETE' });
  while ((await view(p, name)).status !== 'TERMINATED') await sleep(20);
}

/** A request through the gateway (path style), timed to the end of its body. */
async function timed(
  p: RunningPlatform,
  name: string,
  path: string,
  init: RequestInit = {},
): Promise<number> {
  const t = performance.now();
  const res = await fetch(`${p.url}/${p.credentials.workspace}/sandboxes/${name}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'content-type': 'application/json' },
  });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return performance.now() - t;
}

const exec = (p: RunningPlatform, name: string) =>
  timed(p, name, '/process', {
    method: 'POST',
    body: JSON.stringify({ command: 'echo hi', waitForCompletion: true }),
  });

/** Runs f on both sides, alternating which goes first. */
async function both(sides: Side[], i: number, f: (s: Side) => Promise<void>): Promise<void> {
  for (const s of i % 2 === 0 ? sides : [...sides].reverse()) await f(s);
}

function report(what: string, data: Map<string, number[]>, sides: Side[]): void {
  console.log(`${what}:`);
  for (const s of sides) console.log(`  ${s.label}: ${fmt(data.get(s.label) ?? [])}`);
  const [a, b] = sides.map((s) => quantile(data.get(s.label) ?? [], 0.5));
  if (a !== undefined && b !== undefined) console.log(`  ratio B/A of medians: ${(b / a).toFixed(2)}`);
}

async function main(): Promise<void> {
  if (!BASELINE || !existsSync(join(BASELINE, 'apps/platform/dist/main.js'))) {
    throw new Error('BASELINE_REPO must name a built checkout (apps/platform/dist/main.js)');
  }
  const common = {
    TARMAC_IMAGE_DIR: IMAGE_DIR,
    TARMAC_STANDBY_AFTER: '1s',
    // Idle 4 GB sandboxes exceed the host's memory on paper (issue 19 item 13 refuses that).
    TARMAC_MEMORY_OVERCOMMIT: '1000',
  };
  const sides: Side[] = [
    {
      label: 'A (baseline)',
      p: await startPlatform({
        main: join(BASELINE, 'apps/platform/dist/main.js'),
        timeoutMs: 15 * 60_000,
        env: { ...common, TARMAC_BRIDGE: 'tarmacaba0', TARMAC_SUBNET: '10.204.0.0/16' },
      }),
    },
    {
      label: 'B (this build)',
      p: await startPlatform({
        timeoutMs: 15 * 60_000,
        env: { ...common, TARMAC_BRIDGE: 'tarmacabb0', TARMAC_SUBNET: '10.205.0.0/16' },
      }),
    },
  ];
  console.log(
    `load average at start: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const series = () => new Map(sides.map((s) => [s.label, [] as number[]]));
  try {
    // Warm-up: runtime dirs, shifted image copies and disk pools are made once, unmeasured.
    await both(sides, 0, async (s) => {
      await create(s.p, 'warm');
      await remove(s.p, 'warm');
    });

    const creates = series();
    for (let i = 0; i < RUNS; i++) {
      await both(sides, i, async (s) => {
        creates.get(s.label)!.push(await create(s.p, `c-${i}`));
        await remove(s.p, `c-${i}`);
      });
    }
    if (RUNS > 0) report('create-to-DEPLOYED', creates, sides);

    const execs = series();
    const added = series();
    await both(sides, 0, async (s) => void (await create(s.p, 'hot')));
    for (let i = 0; i < EXEC; i++) {
      await both(sides, i, async (s) => void execs.get(s.label)!.push(await exec(s.p, 'hot')));
    }
    if (EXEC > 0) report('exec round trip (echo hi, waitForCompletion)', execs, sides);

    for (let i = 0; i < RESUME; i++) {
      for (const s of sides) while ((await view(s.p, 'hot')).state !== 'STANDBY') await sleep(50);
      await both(sides, i, async (s) => {
        const cold = await timed(s.p, 'hot', '/health');
        const warm = await timed(s.p, 'hot', '/health');
        added.get(s.label)!.push(cold - warm);
      });
    }
    if (RESUME > 0) report('resume added (STANDBY request minus RUNNING, paired)', added, sides);
    console.log(
      `load average at end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    for (const s of sides) {
      for (const n of ['warm', 'hot', ...Array.from({ length: RUNS }, (_, i) => `c-${i}`)]) {
        const res = await s.p.api(`/v0/sandboxes/${n}`);
        if (res.ok && ((await res.json()) as { status: string }).status !== 'TERMINATED')
          await remove(s.p, n);
      }
      await s.p.stop();
    }
  }
}

await main();
