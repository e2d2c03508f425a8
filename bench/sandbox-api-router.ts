// Benchmark: the sandbox API of a REAL sandbox through the platform's router (issue 5), against
// the same request sent to sandboxd directly at the sandbox's IP (<ip>:8080, from the host over
// the bridge) in the same run — the ratio is the router's overhead (auth cache, live-map lookup,
// touch, pipe). The daemon's own cost against a bare node:http server is bench/sandbox-api.ts.
// Needs root, runc and the BUILT platform (npm run build); uses its own bridge and subnet.
// Measured, interleaved (direct, path-style, host-style, session):
//   - exec round trip: POST /process {command:"echo hi", waitForCompletion:true}; target < 15 ms
//     median through the router; reports median, p10–p90 and p99;
//   - router overhead on GET /health (the smallest request);
//   - 1 MiB and 100 MiB write (multipart PUT /filesystem) and read (GET ?download=true);
//   - a 1,000-file tree write (PUT /filesystem/tree).
//
//   node --import tsx bench/sandbox-api-router.ts        (EXEC_RUNS=300)
import { Agent, request } from 'node:http';
import { startPlatform, type RunningPlatform } from '../tests/e2e/support/platform.js';

const EXEC_RUNS = Number(process.env.EXEC_RUNS ?? 300);
const IMAGE_DIR = process.env.TARMAC_TEST_IMAGE_DIR ?? '/var/cache/tarmac-test/images';
const NAME = 'bench-api';
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

interface Target {
  label: string;
  port: number;
  host: string;
  /** Connect address (the platform's loopback, or the sandbox's IP). */
  address: string;
  prefix: string;
  headers: Record<string, string>;
}

function send(t: Target, method: string, path: string, body?: Buffer, headers: Record<string, string> = {}) {
  return new Promise<Buffer>((resolve, reject) => {
    const req = request(
      {
        host: t.address,
        port: t.port,
        method,
        path: t.prefix + path,
        agent,
        headers: {
          host: t.host,
          ...t.headers,
          ...headers,
          ...(body ? { 'content-length': String(body.length) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200 || res.statusCode === 206
            ? resolve(Buffer.concat(chunks))
            : reject(
                new Error(
                  `${t.label} ${method} ${path}: ${res.statusCode} ${String(Buffer.concat(chunks)).slice(0, 200)}`,
                ),
              ),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function interleaved(runs: number, fns: (() => Promise<unknown>)[], warmup = Math.min(20, runs)) {
  for (let i = 0; i < warmup; i++) for (const fn of fns) await fn();
  const out: number[][] = fns.map(() => []);
  for (let i = 0; i < runs; i++) {
    for (let k = 0; k < fns.length; k++) {
      const j = (i + k) % fns.length; // rotate the order so noise lands on every scenario alike
      const t = performance.now();
      await fns[j]!();
      out[j]!.push(performance.now() - t);
    }
  }
  return out.map((xs) => xs.sort((a, b) => a - b));
}

const q = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const ms = (x: number) => `${x.toFixed(2)} ms`;
function report(name: string, xs: number[], extra = '') {
  console.log(
    `  ${name.padEnd(30)} median ${ms(q(xs, 0.5)).padStart(10)}  p10–p90 ${ms(q(xs, 0.1))}–${ms(q(xs, 0.9))}  p99 ${ms(q(xs, 0.99))}${extra}`,
  );
}
const ratio = (xs: number[], base: number[]) => `   ratio ${(q(xs, 0.5) / q(base, 0.5)).toFixed(2)}x`;
const mibps = (bytes: number, xs: number[]) =>
  `  (${(bytes / 1048576 / (q(xs, 0.5) / 1000)).toFixed(0)} MiB/s)`;

function multipart(data: Buffer) {
  const b = `----bench${Date.now()}`;
  const head = Buffer.from(
    `--${b}\r\ncontent-disposition: form-data; name="file"; filename="f"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  );
  return {
    body: Buffer.concat([head, data, Buffer.from(`\r\n--${b}--\r\n`)]),
    type: `multipart/form-data; boundary=${b}`,
  };
}

async function api<T>(p: RunningPlatform, path: string, init?: RequestInit): Promise<T> {
  const res = await p.api(path, init);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

const p = await startPlatform({
  timeoutMs: 15 * 60_000,
  env: {
    TARMAC_IMAGE_DIR: IMAGE_DIR,
    TARMAC_BRIDGE: 'tarmacsab',
    TARMAC_SUBNET: '10.219.0.0/16',
    TARMAC_STANDBY_AFTER: '1h', // no freeze between phases: this measures the warm path
  },
});
try {
  await api(p, '/v0/sandboxes', {
    method: 'POST',
    body: JSON.stringify({
      metadata: { name: NAME },
      spec: { runtime: { image: 'blaxel/base-image:latest', memory: 1024 } },
    }),
  });
  for (let i = 0; ; i++) {
    const s = await api<{ status: string }>(p, `/v0/sandboxes/${NAME}`);
    if (s.status === 'DEPLOYED') break;
    if (s.status === 'FAILED' || i > 1200) throw new Error(`sandbox ${s.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = new URL(p.url);
  const ws = p.credentials.workspace;
  const auth = { authorization: `Bearer ${p.credentials.apiKey}` };
  const path: Target = {
    label: 'path',
    address: '127.0.0.1',
    port: Number(url.port),
    host: url.host,
    prefix: `/${ws}/sandboxes/${NAME}`,
    headers: auth,
  };
  const host: Target = {
    ...path,
    label: 'host',
    host: `sbx-${NAME}-${ws}.local.localhost:${url.port}`,
    prefix: '',
  };
  const ipOut = await send(
    path,
    'POST',
    '/process',
    Buffer.from(JSON.stringify({ command: "hostname -I | cut -d' ' -f1", waitForCompletion: true })),
    { 'content-type': 'application/json' },
  );
  const ip = (JSON.parse(String(ipOut)) as { stdout: string }).stdout.trim();
  const direct: Target = {
    label: 'direct',
    address: ip,
    port: 8080,
    host: `${ip}:8080`,
    prefix: '',
    headers: {},
  };
  // A session: a private preview of port 443 and its token (previews/preview-gateway.ts).
  const preview = await api<{ spec: { url: string } }>(p, `/v0/sandboxes/${NAME}/previews`, {
    method: 'POST',
    body: JSON.stringify({ metadata: { name: 'session-bench' }, spec: { port: 443, public: false } }),
  });
  const token = await api<{ spec: { token: string } }>(
    p,
    `/v0/sandboxes/${NAME}/previews/session-bench/tokens`,
    {
      method: 'POST',
      body: JSON.stringify({ spec: { expiresAt: new Date(Date.now() + 3600_000).toISOString() } }),
    },
  );
  const session: Target = {
    ...path,
    label: 'session',
    host: new URL(preview.spec.url).host,
    prefix: '',
    headers: { 'x-service-preview-token': token.spec.token },
  };
  const all = [direct, path, host, session];

  console.log(`sandbox-api router bench (node ${process.version}, sandbox ${ip}, ${EXEC_RUNS} exec runs)`);
  const json = { 'content-type': 'application/json' };
  const health = await interleaved(
    EXEC_RUNS,
    all.map((t) => () => send(t, 'GET', '/health')),
  );
  console.log('GET /health (router overhead on the smallest request)');
  all.forEach((t, i) => report(t.label, health[i]!, i === 0 ? '' : ratio(health[i]!, health[0]!)));
  const execBody = Buffer.from(JSON.stringify({ command: 'echo hi', waitForCompletion: true }));
  const exec = await interleaved(
    EXEC_RUNS,
    all.map((t) => () => send(t, 'POST', '/process', execBody, json)),
  );
  console.log(
    'exec round trip: POST /process echo hi, waitForCompletion (target < 15 ms through the router)',
  );
  all.forEach((t, i) => report(t.label, exec[i]!, i === 0 ? '' : ratio(exec[i]!, exec[0]!)));

  const pair = [direct, path];
  for (const [label, size, runs] of [
    ['1 MiB', 1 << 20, 40],
    ['100 MiB', 100 << 20, 5],
  ] as const) {
    const mp = multipart(Buffer.alloc(size, 97));
    const w = await interleaved(
      runs,
      pair.map(
        (t) => () =>
          send(t, 'PUT', `/filesystem/%2Ftmp%2F${t.label}.bin`, mp.body, { 'content-type': mp.type }),
      ),
      2,
    );
    const r = await interleaved(
      runs,
      pair.map((t) => () => send(t, 'GET', `/filesystem/%2Ftmp%2F${t.label}.bin?download=true`)),
      2,
    );
    console.log(`${label} write / read (${runs} runs each)`);
    report('direct write (multipart PUT)', w[0]!, mibps(size, w[0]!));
    report('router write (path-style)', w[1]!, `${mibps(size, w[1]!)}${ratio(w[1]!, w[0]!)}`);
    report('direct read (GET download)', r[0]!, mibps(size, r[0]!));
    report('router read (path-style)', r[1]!, `${mibps(size, r[1]!)}${ratio(r[1]!, r[0]!)}`);
  }

  const files: Record<string, string> = {};
  for (let i = 0; i < 1000; i++) files[`d${i % 20}/f${i}.txt`] = `file ${i}\n`;
  const treeBody = Buffer.from(JSON.stringify({ files }));
  let n = 0;
  const tree = await interleaved(
    15,
    pair.map((t) => () => send(t, 'PUT', `/filesystem/tree/%2Ftmp%2Ftree${n++}`, treeBody, json)),
    2,
  );
  console.log('1,000-file tree write (15 runs each, fresh directory per run)');
  report('direct PUT /filesystem/tree', tree[0]!);
  report('router (path-style)', tree[1]!, ratio(tree[1]!, tree[0]!));
} finally {
  agent.destroy();
  await p.api(`/v0/sandboxes/${NAME}`, { method: 'DELETE' }).catch(() => undefined);
  for (let i = 0; i < 200; i++) {
    const res = await p.api(`/v0/sandboxes/${NAME}`).catch(() => undefined);
    const s = res ? ((await res.json()) as { status?: string }) : undefined;
    if (!s || s.status === 'TERMINATED' || res?.status === 404) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 3500));
  await p.stop();
}
