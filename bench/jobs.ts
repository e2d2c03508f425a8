// Jobs (issue 17), against the BUILT platform (npm run build first), as root with runc:
//  1. platform: POST one execution of N trivial tasks (default 100; the image's command is
//     `sh -c 'exit 0'`) at parallelism P (default 10), then GET until it is terminal: time from
//     POST to all tasks done, and the scheduling latency of each task (POST to its startedAt).
//  2. engine: the same N containers (same image, memory, command) run directly through the engine
//     API (LocalEngine.createSandbox, poll inspect until STOPPED, deleteSandbox), P at a time, in
//     the same run: the baseline. Reported: the ratio platform / engine (goal < 1.3x).
// Rounds alternate platform and engine (ROUNDS, default 2) so machine load hits both alike.
//
//   node --import tsx bench/jobs.ts           (N=100 P=10 ROUNDS=2 MEMORY=128)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { testEngine } from '../packages/engine/src/test-support/harness.js';
import { startPlatform, type RunningPlatform } from '../tests/e2e/support/platform.js';
import { jobImageArchive } from '../tests/e2e/jobs/support.js';

const N = Number(process.env.N ?? 100);
const P = Number(process.env.P ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const MEMORY = Number(process.env.MEMORY ?? 128);
const IMAGE_DIR = process.env.TARMAC_TEST_IMAGE_DIR ?? '/var/cache/tarmac-test/images';
// BENCH_BRIDGE / BENCH_SUBNET: another bridge when this one's /16 is in use on the machine.
const NETWORK = {
  bridge: process.env.BENCH_BRIDGE ?? 'tjobs2',
  subnet: process.env.BENCH_SUBNET ?? '10.167.0.0/16',
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
};

async function ok<T>(res: Response, what: string): Promise<T> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

interface Execution {
  status: string;
  stats: { success: number; total: number };
  tasks: { metadata: { startedAt?: string } }[];
}

async function platformRound(
  p: RunningPlatform,
  round: number,
): Promise<{ ms: number; latencies: number[] }> {
  const tasks = Array.from({ length: N }, (_, i) => ({ i }));
  const t0 = Date.now();
  const out = await ok<{ id: string }>(
    await p.api('/v0/jobs/bench/executions', {
      method: 'POST',
      body: JSON.stringify({ tasks, parallelism: P, id: `round-${round}` }),
    }),
    'POST execution',
  );
  for (;;) {
    const e = await ok<Execution>(await p.api(`/v0/jobs/bench/executions/${out.id}`), 'GET execution');
    if (['succeeded', 'failed', 'cancelled', 'timeout'].includes(e.status)) {
      const ms = Date.now() - t0;
      if (e.status !== 'succeeded')
        throw new Error(`execution ${out.id} ${e.status}: ${JSON.stringify(e.stats)}`);
      const latencies = e.tasks.map((t) => Date.parse(t.metadata.startedAt ?? '') - t0);
      return { ms, latencies };
    }
    await sleep(25);
  }
}

async function engineRound(
  engine: ReturnType<typeof testEngine>,
  image: string,
  round: number,
  count = N,
): Promise<number> {
  const t0 = Date.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const id = `jb-${process.pid.toString(36)}-${round < 0 ? 'w' : round}-${i}`;
      await engine.createSandbox({ id, image, memoryMB: MEMORY, command: [], env: {} });
      while ((await engine.inspect(id)).status !== 'STOPPED') await sleep(10);
      await engine.deleteSandbox(id);
    }
  };
  await Promise.all(Array.from({ length: P }, worker));
  return Date.now() - t0;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tarmac-bench-jobs-'));
  const ref = `bench/trivial-${process.pid}:1`;
  const archive = jobImageArchive(work, ref, ['-c', 'exit 0']);
  const p = await startPlatform({
    timeoutMs: 15 * 60_000,
    env: {
      TARMAC_IMAGE_DIR: IMAGE_DIR,
      TARMAC_BRIDGE: NETWORK.bridge,
      TARMAC_SUBNET: NETWORK.subnet,
      TARMAC_JOBS_WORKSPACE_CAPACITY: String(P),
    },
  });
  const engineHome = join(work, 'engine');
  const engine = testEngine(engineHome, {
    network: NETWORK,
    imageDir: join(work, 'images'),
    cgroupParent: 'tarmac-bench',
  });
  try {
    await ok(
      await p.api(`/v0/images/import?ref=${encodeURIComponent(ref)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-tar' },
        body: new Uint8Array(readFileSync(archive)),
      }),
      'import',
    );
    await ok(
      await p.api('/v0/jobs', {
        method: 'POST',
        body: JSON.stringify({
          metadata: { name: 'bench' },
          spec: { runtime: { image: ref, memory: MEMORY, timeout: 600 } },
        }),
      }),
      'create job',
    );
    const engineImage = (await engine.importImage(archive, ref)).ref;
    // Warm-up, not measured: the first container of an image shifts its layers (userns.ts).
    await ok(
      await p.api('/v0/jobs/bench/executions', {
        method: 'POST',
        body: JSON.stringify({ tasks: [{}], id: 'warm-up' }),
      }),
      'warm-up',
    );
    for (;;) {
      const e = await ok<Execution>(await p.api('/v0/jobs/bench/executions/warm-up'), 'warm-up');
      if (e.status === 'succeeded') break;
      if (['failed', 'cancelled', 'timeout'].includes(e.status)) throw new Error(`warm-up ${e.status}`);
      await sleep(50);
    }
    await engineRound(engine, engineImage, -1, 1);
    const platform: number[] = [];
    const direct: number[] = [];
    const latencies: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const r = await platformRound(p, round);
      platform.push(r.ms);
      latencies.push(...r.latencies);
      direct.push(await engineRound(engine, engineImage, round));
      console.log(
        `round ${round + 1}: platform ${r.ms} ms, engine ${direct.at(-1)} ms, ratio ${(r.ms / direct.at(-1)!).toFixed(2)}x (load ${loadavg()[0]!.toFixed(2)})`,
      );
    }
    const ratios = platform.map((ms, i) => ms / direct[i]!);
    console.log(`\n${N} trivial tasks at parallelism ${P}, ${MEMORY} MB, ${ROUNDS} rounds:`);
    console.log(
      `  platform POST-to-done: median ${quantile(platform, 0.5)} ms, spread ${Math.min(...platform)}..${Math.max(...platform)} ms`,
    );
    console.log(
      `  engine direct:         median ${quantile(direct, 0.5)} ms, spread ${Math.min(...direct)}..${Math.max(...direct)} ms`,
    );
    console.log(
      `  ratio platform/engine: median ${quantile(ratios, 0.5).toFixed(2)}x, spread ${Math.min(...ratios).toFixed(2)}..${Math.max(...ratios).toFixed(2)}x (goal < 1.3x)`,
    );
    console.log(
      `  scheduling latency (POST to task start, includes waiting for parallelism): p50 ${quantile(latencies, 0.5)} ms, p99 ${quantile(latencies, 0.99)} ms (n=${latencies.length})`,
    );
    const first = latencies.slice(0, P);
    console.log(
      `  first ${P} tasks (no wait for a slot): p50 ${quantile(first, 0.5)} ms, max ${Math.max(...first)} ms`,
    );
  } finally {
    await p.stop();
    rmSync(p.home, { recursive: true, force: true });
    for (const d of (await import('node:fs')).readdirSync(IMAGE_DIR)) {
      if (decodeURIComponent(d).endsWith(`/${ref}`))
        rmSync(join(IMAGE_DIR, d), { recursive: true, force: true });
    }
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
