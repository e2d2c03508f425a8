// Where the first request after a pause goes (issue 20 item 2): latency of GET /health after
// pauses of various lengths, paired with the request just before each pause, per hop:
//   MODE=gateway (default)  client -> platform gateway -> sandboxd
//   MODE=direct             host -> sandboxd (its address and token, read from the container)
//   MODE=mgmt               client -> platform management /v0/health (no sandbox)
//   CLIENT=http             a node:http keep-alive agent (no client-side idle close) instead of fetch
//   KEEPALIVE=<ms>          the platform listener's TARMAC_KEEPALIVE_TIMEOUT_MS
//   PAUSES=0,7000 N=15      pauses (ms) and samples per pause
//   node --import tsx bench/pause-probe.ts
import { Agent, request } from 'node:http';
import { startPlatform } from '../tests/e2e/support/platform.js';
import { sandboxBootEnv } from './support/boot-env.js';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p = await startPlatform({
  env: {
    TARMAC_STANDBY_AFTER: '10m',
    TARMAC_IMAGE_DIR: '/var/cache/tarmac-test/images',
    TARMAC_BRIDGE: process.env.BRIDGE ?? 'tarmacpool2',
    TARMAC_SUBNET: process.env.SUBNET ?? '10.164.0.0/16',
    TARMAC_POOL: 'off',
    ...(process.env.KEEPALIVE ? { TARMAC_KEEPALIVE_TIMEOUT_MS: process.env.KEEPALIVE } : {}),
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
  let url = `${p.url}/${p.credentials.workspace}/sandboxes/probe/health`;
  let headers: Record<string, string> = { authorization: `Bearer ${p.credentials.apiKey}` };
  if (process.env.MODE === 'mgmt') url = `${p.url}/v0/health`;
  if (process.env.MODE === 'direct') {
    const { readdirSync, readFileSync } = await import('node:fs');
    const id = readdirSync(`${p.home}/sandboxes`).find((d) => !d.startsWith('.'))!;
    const rec = JSON.parse(readFileSync(`${p.home}/sandboxes/${id}/sandbox.json`, 'utf8')) as { ip: string };
    // The sandbox's own env, sandboxd token included (packages/engine boot-env.ts).
    const boot = sandboxBootEnv(id);
    const token = boot.TARMAC_SANDBOXD_TOKEN!;
    url = `http://${rec.ip}:8080/health`;
    headers = { 'x-tarmac-sandbox-token': token };
  }
  const agent = new Agent({ keepAlive: true });
  const viaHttp = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(url, { headers, agent }, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end();
    });
  const one = async () => {
    const t = performance.now();
    if (process.env.CLIENT === 'http') await viaHttp();
    else await (await fetch(url, { headers })).text();
    return performance.now() - t;
  };
  for (let i = 0; i < 50; i++) await one();
  const pauses = (process.env.PAUSES ?? '0,500,1500,3500,4500,5500,7000').split(',').map(Number);
  const n = Number(process.env.N ?? 8);
  for (const pause of pauses) {
    const xs: number[] = [];
    for (let i = 0; i < n; i++) {
      await one();
      await sleep(pause);
      xs.push(await one());
    }
    console.log(
      `pause ${pause} ms: median ${median(xs).toFixed(2)} ms  [${xs.map((x) => x.toFixed(1)).join(' ')}]`,
    );
  }
} finally {
  await p.api('/v0/sandboxes/probe', { method: 'DELETE' });
  await sleep(3000);
  await p.stop();
}
