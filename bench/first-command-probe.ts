// Where the first command from the warm pool goes (issue 20 item 1): per sample, the create's
// round trip (POST /v0/sandboxes, served from the pool: DEPLOYED in the response), the first
// `echo hi` through the gateway, and a second one (warm baseline); medians and spreads.
//   N=10 node --import tsx bench/first-command-probe.ts
import { startPlatform } from '../tests/e2e/support/platform.js';
import { waitPoolFull } from './sandbox-first-command.js';

const N = Number(process.env.N ?? 10);
const SIZE = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const q = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const fmt = (xs: number[]) =>
  `median ${q(xs, 0.5).toFixed(2)} ms, spread ${Math.min(...xs).toFixed(2)}..${Math.max(...xs).toFixed(2)} (n=${xs.length})`;

const p = await startPlatform({
  env: {
    TARMAC_IMAGE_DIR: '/var/cache/tarmac-test/images',
    TARMAC_BRIDGE: 'tarmacpl0',
    TARMAC_SUBNET: '10.187.0.0/16',
    TARMAC_POOL: `tarmac/base:latest@4096=${SIZE}`,
    TARMAC_MEMORY_OVERCOMMIT: '1000',
  },
});
const made: string[] = [];
try {
  const exec = async (name: string) => {
    const t = performance.now();
    const r = await fetch(`${p.url}/${p.credentials.workspace}/sandboxes/${name}/process`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.credentials.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ command: 'echo hi', waitForCompletion: true }),
    });
    const out = (await r.json()) as { stdout?: string };
    if (!r.ok || out.stdout?.trim() !== 'hi') throw new Error(`exec ${r.status} ${JSON.stringify(out)}`);
    return performance.now() - t;
  };
  const create: number[] = [];
  const first: number[] = [];
  const second: number[] = [];
  const total: number[] = [];
  for (let i = -1; i < N; i++) {
    await waitPoolFull(p.home, SIZE);
    await sleep(300);
    const t = performance.now();
    const res = await p.api('/v0/sandboxes', {
      method: 'POST',
      body: JSON.stringify({
        metadata: {},
        spec: { runtime: { image: 'tarmac/base:latest', memory: 4096 } },
      }),
    });
    const body = (await res.json()) as { metadata: { name: string }; status: string };
    const c = performance.now() - t;
    if (body.status !== 'DEPLOYED') throw new Error(`not pooled: ${JSON.stringify(body)}`);
    made.push(body.metadata.name);
    const e1 = await exec(body.metadata.name);
    const e2 = await exec(body.metadata.name);
    if (i < 0) continue; // warm-up
    create.push(c);
    first.push(e1);
    second.push(e2);
    total.push(c + e1);
  }
  console.log(`create (pooled) round trip: ${fmt(create)}`);
  console.log(`first exec: ${fmt(first)}`);
  console.log(`second exec: ${fmt(second)}`);
  console.log(`create + first exec: ${fmt(total)}`);
} finally {
  for (const n of made) await p.api(`/v0/sandboxes/${n}`, { method: 'DELETE' });
  await sleep(3000);
  console.log(
    p
      .output()
      .split('\n')
      .filter((l) => l.includes('trace'))
      .join('\n'),
  );
  await p.stop();
}
