// Where the first request after a pause pays (issue 20 item 2), hop by hop, in ONE run: the
// request just before a 7-second pause against the first one after it, for
//   bare     a trivial node:http server in its own process (the floor: client, kernel, Node);
//   mgmt     the platform's GET /health (its listener and management app, no sandbox);
//   gateway  GET {sandbox}/health through the platform's gateway to sandboxd;
//   direct   GET /health from this process to sandboxd (its address and token; no platform).
// One target per pause, the targets in turn, so each pause's first request is that target's.
// PROBE_V8="--flags" starts the platform with those V8 flags (A/B of a hypothesis).
//   N=6 PAUSE_MS=7000 BENCH_BRIDGE=… BENCH_SUBNET=… node --import tsx bench/pause-localize.ts
import { spawn } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLATFORM_MAIN, startPlatform } from '../tests/e2e/support/platform.js';
import { sandboxBootEnv } from './support/boot-env.js';

const N = Number(process.env.N ?? 6);
const PAUSE_MS = Number(process.env.PAUSE_MS ?? 7000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const q = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const fmt = (xs: number[]) =>
  `median ${q(xs, 0.5).toFixed(2)} ms, spread ${Math.min(...xs).toFixed(2)}..${Math.max(...xs).toFixed(2)}`;

let main: string | undefined;
if (process.env.PROBE_V8) {
  const dir = mkdtempSync(join(tmpdir(), 'tarmac-pause-'));
  main = join(dir, 'main.mjs');
  writeFileSync(
    main,
    `import v8 from 'node:v8'; v8.setFlagsFromString(${JSON.stringify(process.env.PROBE_V8)}); await import(${JSON.stringify(PLATFORM_MAIN)});\n`,
  );
}
const bare = spawn(
  process.execPath,
  [
    '-e',
    `const s = require('node:http').createServer((q, r) => r.end('{"status":"ok"}')); s.keepAliveTimeout = 65000; s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const barePort = await new Promise<number>((r) =>
  bare.stdout!.once('data', (d: Buffer) => r(Number(String(d)))),
);
const p = await startPlatform({
  ...(main ? { main } : {}),
  env: {
    TARMAC_STANDBY_AFTER: '10m',
    TARMAC_IMAGE_DIR: '/var/cache/tarmac-test/images',
    TARMAC_BRIDGE: process.env.BENCH_BRIDGE ?? 'tarmacph2',
    TARMAC_SUBNET: process.env.BENCH_SUBNET ?? '10.127.0.0/16',
    TARMAC_POOL: 'off',
  },
});
try {
  await p.api('/v0/sandboxes', {
    method: 'POST',
    body: JSON.stringify({
      metadata: { name: 'probe' },
      spec: { runtime: { image: 'tarmac/base:latest', memory: 1024 } },
    }),
  });
  for (;;) {
    const s = (await (await p.api('/v0/sandboxes/probe')).json()) as { status: string };
    if (s.status === 'DEPLOYED') break;
    await sleep(20);
  }
  const id = readdirSync(`${p.home}/sandboxes`).find((d) => !d.startsWith('.'))!;
  const rec = JSON.parse(readFileSync(`${p.home}/sandboxes/${id}/sandbox.json`, 'utf8')) as { ip: string };
  const boot = sandboxBootEnv(id);
  const targets: Record<string, { url: string; headers: Record<string, string> }> = {
    bare: { url: `http://127.0.0.1:${barePort}/`, headers: {} },
    mgmt: { url: `${p.url}/health`, headers: {} },
    gateway: {
      url: `${p.url}/${p.credentials.workspace}/sandboxes/probe/health`,
      headers: { authorization: `Bearer ${p.credentials.apiKey}` },
    },
    direct: {
      url: `http://${rec.ip}:8080/health`,
      headers: { 'x-tarmac-sandbox-token': boot.TARMAC_SANDBOXD_TOKEN! },
    },
  };
  const one = async (name: string) => {
    const t = targets[name]!;
    const s = performance.now();
    const res = await fetch(t.url, { headers: t.headers });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${name}: ${res.status}`);
    return performance.now() - s;
  };
  // New connections the client opened (undici's channel): a request after a pause that opens one
  // pays a connect, not a cold path.
  let connects = 0;
  subscribe('undici:client:connected', () => connects++);
  const reconnects: Record<string, number> = {};
  const names = Object.keys(targets);
  for (let i = 0; i < 30; i++) for (const n of names) await one(n);
  const warm: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const after: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const load: number[] = [];
  for (let i = 0; i < N; i++) {
    for (const n of names) {
      for (let k = 0; k < 3; k++) await one(n);
      warm[n]!.push(await one(n));
      await sleep(PAUSE_MS);
      const before = connects;
      after[n]!.push(await one(n));
      reconnects[n] = (reconnects[n] ?? 0) + connects - before;
      load.push(loadavg()[0]!);
    }
  }
  console.log(
    `load ${Math.min(...load).toFixed(1)}..${Math.max(...load).toFixed(1)}; pause ${PAUSE_MS} ms; n=${N}; V8 ${process.env.PROBE_V8 ?? '(defaults)'}`,
  );
  for (const n of names) {
    const added = after[n]!.map((x, i) => x - warm[n]![i]!);
    console.log(
      `${n.padEnd(8)} back to back ${fmt(warm[n]!)} | after pause ${fmt(after[n]!)} | added ${fmt(added)} | new connections after a pause: ${reconnects[n] ?? 0}`,
    );
  }
  if (process.env.SHOW_GC) {
    const gc = p
      .output()
      .split('\n')
      .filter((l) => /Mark-Compact|Scavenge|reduce|Memory/.test(l));
    console.log(`platform GCs: ${gc.length}; the last 15:\n${gc.slice(-15).join('\n')}`);
  }
} finally {
  bare.kill();
  await p.api('/v0/sandboxes/probe', { method: 'DELETE' });
  await sleep(2000);
  await p.stop();
}
