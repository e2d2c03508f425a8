// Management API latency through the platform's real listener (node's HTTP server, the body limit,
// auth, the store, the JSON answer), where bench/api.ts and bench/api-overhead.ts go in-process
// through app.request() and never see node-server's request building. Scenarios, sequential on one
// keep-alive connection (fetch): GET /v0/workspaces/{ws}; POST /v0/workspaces with an invalid name
// (body read, validation, 400); GET /v0/sandboxes/{name} of a running sandbox. Baseline in the
// same run: the platform's GET /health (no auth, no store), and with BASELINE_REPO (another
// checkout, built) the same scenarios on its platform, interleaved round by round (alternating
// which goes first) and reported as the ratio of medians this/baseline.
//
//   npm run build && node --import tsx bench/api-listener.ts            (ROUNDS=6 PER_ROUND=150)
//   BASELINE_REPO=/path/to/checkout node --import tsx bench/api-listener.ts
// Needs root and runc for the sandbox scenario; bridges tarmacab0/tarmacab1, 10.142/10.143.0.0/16.
import { join } from 'node:path';
import { startPlatform, type RunningPlatform } from '../tests/e2e/support/platform.js';

const ROUNDS = Number(process.env.ROUNDS ?? 6);
const PER_ROUND = Number(process.env.PER_ROUND ?? 150);
const BASELINE = process.env.BASELINE_REPO;
const SANDBOX = 'bench-api';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const scenarios = {
  health: (p: RunningPlatform) => fetch(`${p.url}/health`),
  'GET workspace': (p: RunningPlatform) => p.api(`/v0/workspaces/${p.credentials.workspace}`),
  'POST invalid (400)': (p: RunningPlatform) =>
    p.api('/v0/workspaces', { method: 'POST', body: JSON.stringify({ name: 'UPPER case' }) }),
  'GET sandbox': (p: RunningPlatform) => p.api(`/v0/sandboxes/${SANDBOX}`),
};
type Scenario = keyof typeof scenarios;

interface Side {
  label: string;
  p: RunningPlatform;
  samples: Record<Scenario, number[]>;
}

const start = (bridge: string, subnet: string, main?: string) =>
  startPlatform({
    ...(main ? { main } : {}),
    env: {
      TARMAC_POOL: 'off',
      TARMAC_BRIDGE: bridge,
      TARMAC_SUBNET: subnet,
      TARMAC_IMAGE_DIR: process.env.TARMAC_TEST_IMAGE_DIR ?? '/var/cache/tarmac-test/images',
    },
  });

async function withSandbox(p: RunningPlatform): Promise<void> {
  const created = await p.api('/v0/sandboxes', {
    method: 'POST',
    body: JSON.stringify({
      metadata: { name: SANDBOX },
      spec: { runtime: { image: 'tarmac/base:latest', memory: 2048 } },
    }),
  });
  if (!created.ok) throw new Error(`create: ${created.status} ${await created.text()}`);
  for (let i = 0; i < 600; i++) {
    const s = (await (await p.api(`/v0/sandboxes/${SANDBOX}`)).json()) as { status: string };
    if (s.status === 'DEPLOYED') return;
    await sleep(50);
  }
  throw new Error('the sandbox was not DEPLOYED within 30 s');
}

async function timed(p: RunningPlatform, s: Scenario): Promise<number> {
  const t = performance.now();
  const res = await scenarios[s](p);
  await res.arrayBuffer();
  const ms = performance.now() - t;
  const expected = s === 'POST invalid (400)' ? 400 : 200;
  if (res.status !== expected) throw new Error(`${s}: HTTP ${res.status}, expected ${expected}`);
  return ms;
}

const q = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const fmt = (xs: number[]) =>
  `median ${q(xs, 0.5).toFixed(3)} ms, p10–p90 ${q(xs, 0.1).toFixed(3)}–${q(xs, 0.9).toFixed(3)} (n=${xs.length})`;
const empty = (): Record<Scenario, number[]> => ({
  health: [],
  'GET workspace': [],
  'POST invalid (400)': [],
  'GET sandbox': [],
});

const sides: Side[] = [];
try {
  sides.push({ label: 'this', p: await start('tarmacab1', '10.143.0.0/16'), samples: empty() });
  if (BASELINE) {
    const main = join(BASELINE, 'apps/platform/dist/main.js');
    sides.push({ label: 'baseline', p: await start('tarmacab0', '10.142.0.0/16', main), samples: empty() });
  }
  for (const s of sides) await withSandbox(s.p);
  for (let r = -1; r < ROUNDS; r++) {
    for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
      for (const s of Object.keys(scenarios) as Scenario[]) {
        for (let i = 0; i < PER_ROUND; i++) {
          const ms = await timed(side.p, s);
          if (r >= 0) side.samples[s].push(ms); // round -1 warms both up
        }
      }
    }
  }
  console.log(`management API through the listener — ${ROUNDS} rounds × ${PER_ROUND} requests per scenario`);
  for (const side of sides) {
    const health = q(side.samples.health, 0.5);
    for (const s of Object.keys(scenarios) as Scenario[]) {
      const ratio = s === 'health' ? '' : `; ÷ GET /health ${(q(side.samples[s], 0.5) / health).toFixed(2)}x`;
      console.log(`[${side.label}] ${s.padEnd(19)} ${fmt(side.samples[s])}${ratio}`);
    }
  }
  const [a, b] = sides;
  if (a && b) {
    for (const s of Object.keys(scenarios) as Scenario[]) {
      const ratio = q(a.samples[s], 0.5) / q(b.samples[s], 0.5);
      console.log(`ratio of medians this/baseline, ${s}: ${ratio.toFixed(2)}`);
    }
  }
} finally {
  for (const s of sides) {
    await s.p.api(`/v0/sandboxes/${SANDBOX}`, { method: 'DELETE' }).catch(() => undefined);
  }
  await sleep(1500);
  for (const s of sides) await s.p.stop();
}
