// Where the first command from the warm pool goes (issue 20 item 1): per sample, the create's
// round trip (POST /v0/sandboxes, served from the pool: DEPLOYED in the response), the first
// `echo hi` through the gateway, and a second one (warm baseline); medians and spreads.
// With BASELINE_REPO (another checkout, built), the same samples on its platform, interleaved
// (alternating which goes first), and the ratio of medians this/baseline: load hits both alike.
//   N=10 node --import tsx bench/first-command-probe.ts
//   BASELINE_REPO=/path/to/main BENCH_BRIDGE=… BENCH_SUBNET=10.x.0.0/16 BASE_BRIDGE=… BASE_SUBNET=…
// BASELINE_LEGACY=0: the baseline has the ready label (a checkout from 8eae77c on).
// BASELINE_POOL_HOT=0 instead: the baseline is this build with TARMAC_POOL_HOT=0 (all frozen).
// THIS_POOL_HOT=0: this build's side with all members frozen (tells the build from the hot member).
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { removeHome, startPlatform, type RunningPlatform } from '../tests/e2e/support/platform.js';
import { waitPoolFull } from './sandbox-first-command.js';

const N = Number(process.env.N ?? 10);
const SIZE = 2;
const BASELINE = process.env.BASELINE_REPO;
const BASELINE_HOT = process.env.BASELINE_POOL_HOT;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const q = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const fmt = (xs: number[]) =>
  `median ${q(xs, 0.5).toFixed(2)} ms, spread ${Math.min(...xs).toFixed(2)}..${Math.max(...xs).toFixed(2)} (n=${xs.length})`;

interface Side {
  label: string;
  p: RunningPlatform;
  legacy: boolean;
  made: string[];
  create: number[];
  first: number[];
  second: number[];
  total: number[];
}

const start = (bridge: string, subnet: string, main?: string, hot?: string) =>
  startPlatform({
    ...(main ? { main } : {}),
    env: {
      ...(hot !== undefined ? { TARMAC_POOL_HOT: hot } : {}),
      TARMAC_IMAGE_DIR: '/var/cache/tarmac-test/images',
      TARMAC_BRIDGE: bridge,
      TARMAC_SUBNET: subnet,
      TARMAC_POOL: `tarmac/base:latest@4096=${SIZE}`,
      TARMAC_MEMORY_OVERCOMMIT: '1000',
    },
  });

const side = (label: string, p: RunningPlatform, legacy: boolean): Side => ({
  label,
  p,
  legacy,
  made: [],
  create: [],
  first: [],
  second: [],
  total: [],
});

async function exec(p: RunningPlatform, name: string): Promise<number> {
  const t = performance.now();
  const r = await fetch(`${p.url}/${p.credentials.workspace}/sandboxes/${name}/process`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ command: 'echo hi', waitForCompletion: true }),
  });
  const out = (await r.json()) as { stdout?: string };
  if (!r.ok || out.stdout?.trim() !== 'hi') throw new Error(`exec ${r.status} ${JSON.stringify(out)}`);
  return performance.now() - t;
}

async function sample(s: Side, keep: boolean): Promise<void> {
  await waitPoolFull(s.p.home, SIZE, s.legacy);
  await sleep(300);
  const t = performance.now();
  const res = await s.p.api('/v0/sandboxes', {
    method: 'POST',
    body: JSON.stringify({ metadata: {}, spec: { runtime: { image: 'tarmac/base:latest', memory: 4096 } } }),
  });
  const body = (await res.json()) as { metadata: { name: string }; status: string };
  const c = performance.now() - t;
  if (body.status !== 'DEPLOYED') throw new Error(`${s.label}: not pooled: ${JSON.stringify(body)}`);
  s.made.push(body.metadata.name);
  const e1 = await exec(s.p, body.metadata.name);
  const e2 = await exec(s.p, body.metadata.name);
  await s.p.api(`/v0/sandboxes/${body.metadata.name}`, { method: 'DELETE' });
  if (!keep) return; // warm-up
  s.create.push(c);
  s.first.push(e1);
  s.second.push(e2);
  s.total.push(c + e1);
}

const sides: Side[] = [];
try {
  sides.push(
    side(
      'this',
      await start(
        process.env.BENCH_BRIDGE ?? 'tarmacpl0',
        process.env.BENCH_SUBNET ?? '10.187.0.0/16',
        undefined,
        process.env.THIS_POOL_HOT,
      ),
      false,
    ),
  );
  if (BASELINE || BASELINE_HOT !== undefined) {
    const main = BASELINE ? join(BASELINE, 'apps/platform/dist/main.js') : undefined;
    const bridge = process.env.BASE_BRIDGE ?? 'tarmacpl1';
    const subnet = process.env.BASE_SUBNET ?? '10.188.0.0/16';
    // A baseline from before the pool's ready label (8eae77c) counts frozen members only.
    const legacy = BASELINE !== undefined && process.env.BASELINE_LEGACY !== '0';
    sides.push(side('baseline', await start(bridge, subnet, main, BASELINE_HOT), legacy));
  }
  const load: number[] = [];
  for (let i = -1; i < N; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    for (const s of order) await sample(s, i >= 0);
    load.push(loadavg()[0]!);
  }
  console.log(
    `load (1 min) during the run: ${Math.min(...load).toFixed(1)}..${Math.max(...load).toFixed(1)}`,
  );
  for (const s of sides) {
    console.log(`[${s.label}] create (pooled) round trip: ${fmt(s.create)}`);
    console.log(`[${s.label}] first exec: ${fmt(s.first)}`);
    console.log(`[${s.label}] second exec: ${fmt(s.second)}`);
    console.log(`[${s.label}] create + first exec: ${fmt(s.total)}`);
  }
  const [a, b] = sides;
  if (a && b) {
    for (const k of ['create', 'first', 'second', 'total'] as const) {
      console.log(`ratio of medians this/baseline, ${k}: ${(q(a[k], 0.5) / q(b[k], 0.5)).toFixed(2)}`);
    }
  }
} finally {
  await sleep(1000);
  for (const s of sides) {
    const trace = s.p
      .output()
      .split('\n')
      .filter((l) => l.includes('trace'));
    if (trace.length > 0) console.log(`[${s.label}] ${trace.join(`\n[${s.label}] `)}`);
    await s.p.stop(); // destroys the pool's members; the samples' sandboxes were deleted each
    removeHome(s.p.home);
  }
}
