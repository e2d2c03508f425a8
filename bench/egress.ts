// Benchmark: requests through the egress proxy against the same requests straight from the host,
// to an upstream in a network namespace of its own (10.231.2.0/24; nothing else is contacted).
// Prints medians and spreads (p10–p90) and the ratio proxied/direct measured in the same run,
// direct and proxied runs interleaved. The client runs in this process too, so the proxied CPU
// cost includes a client's TLS as well (three TLS ends in one thread when intercepted).
// Run as root: node --import tsx bench/egress.ts
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { connect as netConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import {
  createCaMaterial,
  LeafCertificates,
} from '../apps/platform/src/planes/sandbox/egress/certificate-authority.js';
import { staticLookup } from '../apps/platform/src/framework/destinations/destination-guard.js';
import { readNetworkSettings } from '../apps/platform/src/planes/sandbox/records/network-settings.js';
import { compilePolicy } from '../apps/platform/src/planes/sandbox/egress/policy.js';
import { EgressProxy } from '../apps/platform/src/planes/sandbox/egress/proxy-server.js';
import { makeOutsideCerts } from '../tests/e2e/network/support/certs.js';

const NS = 'tmeg-bench'; // fixed names: a run killed half-way is cleaned up by the next one
const HOST_IF = 'tmeb0';
const HOST_IP = '10.231.2.1';
const UP_IP = '10.231.2.2';
const SMALL_REQUESTS = 400;
const BIG_BYTES = 64 * 1024 * 1024;
const BIG_RUNS = 5;
const RPS_SECONDS = 5;
const CONCURRENCY = 8;

const UPSTREAM = `
import { readFileSync } from 'node:fs';
import { createServer as h } from 'node:http';
import { createServer as hs } from 'node:https';
const [ip, cert, key, big] = process.argv.slice(1);
const chunk = Buffer.alloc(1 << 20, 97);
const handler = (req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url.startsWith('/big')) {
      res.writeHead(200, { 'content-length': String(big) });
      let left = Number(big);
      const pump = () => { while (left > 0) { const n = Math.min(left, chunk.length); left -= n; if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return res.once('drain', pump); } res.end(); };
      return pump();
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '11' });
    res.end('{"ok":true}');
  });
};
await new Promise((r) => h(handler).listen(80, ip, r));
await new Promise((r) => hs({ cert: readFileSync(cert), key: readFileSync(key) }, handler).listen(443, ip, r));
console.log('ready');
`;

function ip(args: string[]): void {
  execFileSync('ip', args, { stdio: 'ignore' });
}

function cleanup(): void {
  for (const a of [
    ['link', 'del', HOST_IF],
    ['netns', 'del', NS],
  ]) {
    try {
      ip(a);
    } catch {
      // not there
    }
  }
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const fmt = (xs: number[], unit: string, digits = 3) =>
  `median ${pct(xs, 50).toFixed(digits)} ${unit} (p10 ${pct(xs, 10).toFixed(digits)} – p90 ${pct(xs, 90).toFixed(digits)})`;

type Send = (path: string) => Promise<number>;

function sender(make: (path: string) => ReturnType<typeof httpRequest>): Send {
  return (path) =>
    new Promise((resolve, reject) => {
      const req = make(path);
      req.on('response', (res) => {
        let n = 0;
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(n) : reject(new Error(`status ${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end();
    });
}

/** An https agent whose connections are CONNECT tunnels through the proxy. */
class TunnelAgent extends HttpsAgent {
  constructor(
    private readonly proxyPort: number,
    private readonly ca: string,
  ) {
    super({ keepAlive: true, maxSockets: CONCURRENCY });
  }
  override createConnection(
    options: RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): undefined {
    // The agent always passes a callback; it accepts the socket asynchronously.
    const cb = callback as (err: Error | null, stream?: Duplex) => void;
    const raw = netConnect(this.proxyPort, HOST_IP);
    raw.once('connect', () =>
      raw.write(`CONNECT ${options.host}:${options.port} HTTP/1.1\r\nHost: ${options.host}\r\n\r\n`),
    );
    let buf = Buffer.alloc(0);
    const onData = (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      raw.removeListener('data', onData);
      if (!buf.subarray(0, 12).toString().includes(' 200')) return cb(new Error(buf.toString()));
      cb(null, tlsConnect({ socket: raw, servername: String(options.host), ca: this.ca }));
    };
    raw.on('data', onData);
    raw.once('error', (e) => cb(e));
    return undefined;
  }
}

/**
 * Direct and proxied runs alternate (request by request, window by window), so the load of a
 * shared 2-core machine lands on both sides of each ratio alike.
 */
async function latency(direct: Send, proxied: Send): Promise<[number[], number[]]> {
  for (let i = 0; i < 20; i++) await Promise.all([direct('/small'), proxied('/small')]);
  const out: [number[], number[]] = [[], []];
  for (let i = 0; i < SMALL_REQUESTS; i++) {
    for (const [k, send] of [direct, proxied].entries()) {
      const t = process.hrtime.bigint();
      await send('/small');
      out[k]!.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
  return out;
}

async function window(send: Send): Promise<number> {
  let n = 0;
  const until = Date.now() + 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < until) {
        await send('/small');
        n++;
      }
    }),
  );
  return n;
}

async function rps(direct: Send, proxied: Send): Promise<[number[], number[]]> {
  const out: [number[], number[]] = [[], []];
  for (let second = 0; second < RPS_SECONDS; second++) {
    out[0].push(await window(direct));
    out[1].push(await window(proxied));
  }
  return out;
}

async function download(send: Send): Promise<number> {
  const t = process.hrtime.bigint();
  const n = await send('/big');
  return n / (1024 * 1024) / (Number(process.hrtime.bigint() - t) / 1e9);
}

async function throughput(direct: Send, proxied: Send): Promise<[number[], number[]]> {
  const out: [number[], number[]] = [[], []];
  for (let i = 0; i < BIG_RUNS; i++) {
    out[0].push(await download(direct));
    out[1].push(await download(proxied));
  }
  return out;
}

/** Ratio of medians, and the spread of per-pair ratios (p10–p90) where runs are paired. */
function ratio(d: number[], p: number[]): string {
  const pairs = d.map((x, i) => (p[i] ?? NaN) / x);
  return `${(pct(p, 50) / pct(d, 50)).toFixed(2)}x (per-pair p10 ${pct(pairs, 10).toFixed(2)} – p90 ${pct(pairs, 90).toFixed(2)})`;
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0)
    throw new Error('bench/egress.ts needs root (it creates a network namespace)');
  cleanup();
  const dir = mkdtempSync(join(tmpdir(), 'tarmac-egress-bench-'));
  let upstream: ChildProcess | undefined;
  let proxy: EgressProxy | undefined;
  try {
    ip(['netns', 'add', NS]);
    ip(['link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', `${HOST_IF}n`]);
    ip(['link', 'set', `${HOST_IF}n`, 'netns', NS]);
    ip(['addr', 'add', `${HOST_IP}/24`, 'dev', HOST_IF]);
    ip(['link', 'set', HOST_IF, 'up']);
    ip(['-n', NS, 'addr', 'add', `${UP_IP}/24`, 'dev', `${HOST_IF}n`]);
    ip(['-n', NS, 'link', 'set', `${HOST_IF}n`, 'up']);
    ip(['-n', NS, 'link', 'set', 'lo', 'up']);
    const certs = makeOutsideCerts(dir, ['up.bench.test', 'routed.bench.test']);
    upstream = spawn(
      'ip',
      [
        'netns',
        'exec',
        NS,
        process.execPath,
        '--input-type=module',
        '-e',
        UPSTREAM,
        UP_IP,
        certs.cert,
        certs.key,
        String(BIG_BYTES),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => upstream?.stdout?.once('data', () => resolve()));

    const ca = createCaMaterial(new Date());
    const policy = compilePolicy(
      'bench',
      readNetworkSettings({
        proxy: {
          routing: [
            {
              destinations: ['routed.bench.test'],
              headers: { Authorization: 'Bearer {{SECRET:k}}' },
              secrets: { k: 'secret' },
            },
          ],
        },
      }).settings,
    );
    proxy = new EgressProxy({
      policyFor: () => policy,
      leafCertificates: new LeafCertificates(ca),
      extraUpstreamCa: [certs.caPem],
      lookup: staticLookup({ 'up.bench.test': UP_IP, 'routed.bench.test': UP_IP }),
    });
    await new Promise<void>((r) => proxy?.server.listen(0, HOST_IP, r));
    const proxyPort = (proxy.server.address() as { port: number }).port;

    const directHttpAgent = new HttpAgent({ keepAlive: true, maxSockets: CONCURRENCY });
    const proxyHttpAgent = new HttpAgent({ keepAlive: true, maxSockets: CONCURRENCY });
    const directHttpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: CONCURRENCY, ca: certs.caPem });
    const tunnelAgent = new TunnelAgent(proxyPort, certs.caPem);
    const interceptAgent = new TunnelAgent(proxyPort, ca.certPem);

    const cases: [string, Send, Send][] = [
      [
        'HTTP (absolute-URI forward)',
        sender((p) =>
          httpRequest({
            host: UP_IP,
            port: 80,
            path: p,
            agent: directHttpAgent,
            headers: { host: 'up.bench.test' },
          }),
        ),
        sender((p) =>
          httpRequest({
            host: HOST_IP,
            port: proxyPort,
            path: `http://up.bench.test${p}`,
            agent: proxyHttpAgent,
          }),
        ),
      ],
      [
        'HTTPS (CONNECT tunnel, not intercepted)',
        sender((p) =>
          httpsRequest({
            host: UP_IP,
            port: 443,
            path: p,
            servername: 'up.bench.test',
            agent: directHttpsAgent,
          }),
        ),
        sender((p) => httpsRequest({ host: 'up.bench.test', port: 443, path: p, agent: tunnelAgent })),
      ],
      [
        'HTTPS (intercepted, header injected)',
        sender((p) =>
          httpsRequest({
            host: UP_IP,
            port: 443,
            path: p,
            servername: 'routed.bench.test',
            agent: directHttpsAgent,
          }),
        ),
        sender((p) => httpsRequest({ host: 'routed.bench.test', port: 443, path: p, agent: interceptAgent })),
      ],
    ];
    console.log(
      `egress proxy bench: upstream in netns ${NS}; ${SMALL_REQUESTS} sequential small requests, ${CONCURRENCY}-way requests/s over ${RPS_SECONDS} s, ${BIG_RUNS} downloads of ${BIG_BYTES >> 20} MiB`,
    );
    for (const [name, direct, proxied] of cases) {
      console.log(`\n## ${name}`);
      const [ld, lp] = await latency(direct, proxied);
      console.log(`latency   direct  ${fmt(ld, 'ms')}`);
      console.log(`latency   proxied ${fmt(lp, 'ms')}`);
      console.log(
        `latency   ratio proxied/direct ${ratio(ld, lp)}, added ${(pct(lp, 50) - pct(ld, 50)).toFixed(3)} ms`,
      );
      const [rd, rp] = await rps(direct, proxied);
      console.log(`req/s     direct  ${fmt(rd, 'req/s', 0)}`);
      console.log(`req/s     proxied ${fmt(rp, 'req/s', 0)}`);
      console.log(`req/s     ratio proxied/direct ${ratio(rd, rp)}`);
      const [td, tp] = await throughput(direct, proxied);
      console.log(`download  direct  ${fmt(td, 'MiB/s', 0)}`);
      console.log(`download  proxied ${fmt(tp, 'MiB/s', 0)}`);
      console.log(`download  ratio proxied/direct ${ratio(td, tp)}`);
    }
    for (const a of [directHttpAgent, proxyHttpAgent, directHttpsAgent, tunnelAgent, interceptAgent])
      a.destroy();
  } finally {
    await proxy?.close();
    upstream?.kill('SIGKILL');
    cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  cleanup();
  process.exit(1);
});
