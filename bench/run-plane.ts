// The run gateway's overhead (issue 16 `bench/run-plane.ts`, first part): the same client calls
// the same agent replica (the e2e's Node server, built by the builds plane from a folder) directly
// at <replica ip>:8080 on the bridge, and through the built platform's run URL
// (`{run_url}/{ws}/agents/{name}`: API-key auth from the access cache, the record and ready
// replica from memory, the byte-for-byte proxy). Rounds interleaved (direct, gateway, direct, …)
// so machine load hits both:
//  - latency of POST {inputs} p50/p99 and the added ms (goal < 1 ms p50 added);
//  - requests/s with 32 concurrent clients, and gateway/direct as a ratio;
//  - then (bench/run-plane-idle.ts, the platform restarted on the same home with 1 s / 4 s idle
//    windows, the replica re-attached): first request from STANDBY vs the warm one after it, and
//    first request after full scale to zero (image cached) vs the warm one after it.
//
//   npm run build && node --import tsx bench/run-plane.ts
//   ITERATIONS=1000 ROUNDS=5 SECONDS=4 STANDBY_RUNS=30 COLD_RUNS=10 node --import tsx bench/run-plane.ts
//   BENCH_BRIDGE / BENCH_SUBNET: another bridge and /16 (default tarmacrp1, 10.191.0.0/16).
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { zipOf } from '../apps/platform/src/planes/builds/test-archives.js';
import { APP_MEMBERS } from '../tests/e2e/run/app-image.js';
import { removeHome, startPlatform } from '../tests/e2e/support/platform.js';
import { measureIdle } from './run-plane-idle.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const ITERATIONS = Number(process.env.ITERATIONS ?? 1000);
const SECONDS = Number(process.env.SECONDS ?? 4);
const STANDBY_RUNS = Number(process.env.STANDBY_RUNS ?? 30);
const COLD_RUNS = Number(process.env.COLD_RUNS ?? 10);
const CONCURRENCY = 32;
const NETWORK = {
  TARMAC_BRIDGE: process.env.BENCH_BRIDGE ?? 'tarmacrp1',
  TARMAC_SUBNET: process.env.BENCH_SUBNET ?? '10.191.0.0/16',
};
const IMAGE_DIR = process.env.TARMAC_TEST_IMAGE_DIR ?? '/var/cache/tarmac-test/images';

let platform = await startPlatform({ env: NETWORK });
const ws = platform.credentials.workspace;
const key = platform.credentials.apiKey;
const workspaceId = ((await (await platform.api(`/v0/workspaces/${ws}`)).json()) as { id: string }).id;
const open = await platform.api('/v0/agents?upload=true', {
  method: 'POST',
  body: JSON.stringify({ metadata: { name: 'bench' }, spec: { runtime: { memory: 512 } } }),
});
const put = await fetch(open.headers.get('x-blaxel-upload-url')!, {
  method: 'PUT',
  body: zipOf(APP_MEMBERS),
  headers: { 'content-type': 'application/zip' },
});
if (put.status !== 200) throw new Error(`upload: HTTP ${put.status}`);
for (const deadline = Date.now() + 600_000; ;) {
  const r = (await (await platform.api('/v0/agents/bench')).json()) as { status: string };
  if (r.status === 'DEPLOYED') break;
  if (r.status === 'FAILED' || Date.now() > deadline) throw new Error(`agent ${r.status}`);
  await new Promise((res) => setTimeout(res, 500));
}
// The replica's bridge address, from the engine's record of its container.
const replicaId = readdirSync(join(platform.home, 'sandboxes')).find((d) => d.startsWith('rp-'))!;
const { ip } = JSON.parse(
  readFileSync(join(platform.home, 'sandboxes', replicaId, 'sandbox.json'), 'utf8'),
) as {
  ip: string;
};

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const targets = {
  direct: { host: ip, port: 8080, path: '/' },
  gateway: { host: '127.0.0.1', port: platform.port, path: `/${ws}/agents/bench` },
};
type Target = keyof typeof targets;
const payload = JSON.stringify({ inputs: 'hello' });

function once(target: Target): Promise<number> {
  const t = targets[target];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      {
        ...t,
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`${target}: HTTP ${res.statusCode}`));
        res.resume();
        res.on('end', () => resolve(performance.now() - started));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function throughput(target: Target): Promise<number> {
  let done = 0;
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await once(target);
        done++;
      }
    }),
  );
  return done / SECONDS;
}

for (const t of ['direct', 'gateway'] as const) for (let i = 0; i < 300; i++) await once(t); // warm-up

const samples = { direct: [] as number[], gateway: [] as number[] };
const rps = { direct: [] as number[], gateway: [] as number[] };
for (let r = 0; r < ROUNDS; r++) {
  for (const t of ['direct', 'gateway'] as const)
    for (let i = 0; i < ITERATIONS; i++) samples[t].push(await once(t));
  for (const t of ['direct', 'gateway'] as const) rps[t].push(await throughput(t));
}

const ms = (x: number) => `${x.toFixed(3)} ms`;
const [d50, g50, d99, g99] = [
  pct(samples.direct, 0.5),
  pct(samples.gateway, 0.5),
  pct(samples.direct, 0.99),
  pct(samples.gateway, 0.99),
];
const med = (xs: number[]) => pct(xs, 0.5);
console.log(
  `run gateway overhead — ${ROUNDS} rounds × ${ITERATIONS} calls each, ${cpus().length} cores, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  `POST {inputs}       p50 direct ${ms(d50)}  gateway ${ms(g50)}  added ${ms(g50 - d50)} (${(g50 / d50).toFixed(2)}x)   p99 direct ${ms(d99)}  gateway ${ms(g99)}  added ${ms(g99 - d99)}`,
);
console.log(
  `requests/s @${CONCURRENCY}      direct ${med(rps.direct).toFixed(0)}  gateway ${med(rps.gateway).toFixed(0)}  ratio ${(med(rps.gateway) / med(rps.direct)).toFixed(2)}x  (per round: direct ${rps.direct.map((x) => x.toFixed(0)).join(',')}; gateway ${rps.gateway.map((x) => x.toFixed(0)).join(',')})`,
);

agent.destroy();

// STANDBY and scale to zero: the replica outlives the platform; the restarted one adopts it.
await platform.stop();
platform = await startPlatform({
  home: platform.home,
  env: { ...NETWORK, TARMAC_RUN_STANDBY_AFTER_SECONDS: '1', TARMAC_RUN_STOP_AFTER_SECONDS: '4' },
});
const idle = await measureIdle(
  { port: platform.port, path: `/${ws}/agents/bench`, key, home: platform.home },
  STANDBY_RUNS,
  COLD_RUNS,
);
const spread = (xs: number[]) =>
  `p50 ${ms(pct(xs, 0.5))} p99 ${ms(pct(xs, 0.99))} max ${ms(Math.max(...xs))}`;
console.log(
  `from STANDBY (${STANDBY_RUNS}) first ${spread(idle.standby)} | warm after ${spread(idle.warmAfterStandby)} | added p50 ${ms(pct(idle.standby, 0.5) - pct(idle.warmAfterStandby, 0.5))} p99 ${ms(pct(idle.standby, 0.99) - pct(idle.warmAfterStandby, 0.99))} (goal < 5 ms p99)`,
);
console.log(
  `after scale to zero (${COLD_RUNS}) first byte ${spread(idle.cold)} | warm after ${spread(idle.warmAfterCold)} | ratio p50 ${(pct(idle.cold, 0.5) / pct(idle.warmAfterCold, 0.5)).toFixed(0)}x (goal < 500 ms)`,
);
console.log(
  `load after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);

await platform.api('/v0/agents/bench', { method: 'DELETE' });
for (let i = 0; i < 60 && readdirSync(join(platform.home, 'sandboxes')).length > 0; i++)
  await new Promise((res) => setTimeout(res, 500));
await platform.stop();
removeHome(platform.home);
for (const d of readdirSync(IMAGE_DIR)) {
  if (decodeURIComponent(d).startsWith(`ws-${workspaceId}/`))
    rmSync(join(IMAGE_DIR, d), { recursive: true, force: true });
}
