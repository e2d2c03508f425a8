// Cost of the management request pipeline — API-key auth, JWT auth, version and workspace
// resolution — over a bare route of the same Hono app, in-process with app.request() (no sockets).
// Each scenario hits a trivial handler mounted through the same mountRoute; the only difference is
// what the pipeline does before the handler. Reported per request: median µs and the added µs over
// the bare route (and the ratio), with the spread (min..max) over rounds. Target: < 300 µs added.
//
//   node --import tsx bench/api-overhead.ts               (SQLite, the default store)
//   TARMAC_BENCH_DATABASE_URL=postgres://… node --import tsx bench/api-overhead.ts
import { defineRoute } from '@tarmac/contract';
import { buildApp } from '@tarmac/platform';
import { CursorCodec, mountRoute, type RouteDeps } from '@tarmac/server-kit';
import { openStore } from '@tarmac/store';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { z } from 'zod';
import { bootstrap } from '../apps/platform/src/planes/identity/bootstrap.js';
import {
  BearerAuthenticator,
  MembershipWorkspaceResolver,
} from '../apps/platform/src/planes/identity/auth/authenticator.js';
import {
  generateSigningJwk,
  JwtService,
  signingKeyFromJwk,
} from '../apps/platform/src/planes/identity/auth/jwt.js';

const ROUNDS = Number(process.env.ROUNDS ?? 9);
const ITERATIONS = Number(process.env.ITERATIONS ?? 2000);
const WARMUP = 500;

const dir = mkdtempSync(join(tmpdir(), 'tarmac-bench-'));
const pgUrl = process.env.TARMAC_BENCH_DATABASE_URL;
const schema = `bench_${randomBytes(4).toString('hex')}`;
const store = await openStore(
  pgUrl ? { databaseUrl: pgUrl, schema } : { databaseUrl: join(dir, 'tarmac.db') },
);
const now = () => new Date();
const identity = await bootstrap(store, { mintKey: true, now });
const signingKey = await signingKeyFromJwk(await generateSigningJwk());
const cursorSecret = new Uint8Array(randomBytes(32));
// Logs are written (serialised) as in production, to a sink, so their cost is in every scenario.
const logger = pino({ level: 'info' }, { write: () => {} });
const app = buildApp({
  store,
  logger,
  signingKey,
  cursorSecret,
  apiUrl: () => 'http://bench',
  version: 'bench',
});

// The same dependencies buildApp gives its routes, to mount the benchmark's trivial routes.
const jwt = new JwtService(signingKey, 'tarmac');
const deps: RouteDeps = {
  authenticator: new BearerAuthenticator(store, jwt),
  workspaces: new MembershipWorkspaceResolver(store),
  cursors: new CursorCodec(cursorSecret),
};
const ok = z.object({ ok: z.boolean() });
const route = (path: string, auth: 'public' | 'principal' | 'workspace') =>
  defineRoute({ operationId: path, method: 'get', path, summary: '', tag: 'bench', auth, response: ok });
mountRoute(app, deps, route('/bench/bare', 'public'), async () => ({ ok: true }));
mountRoute(app, deps, route('/bench/principal', 'principal'), async () => ({ ok: true }));
mountRoute(app, deps, route('/bench/workspace', 'workspace'), async () => ({ ok: true }));
// A/B in the same run: the same pipeline, but the authenticator is not told the named workspace,
// so the key and the workspace access are two queries (as before the joined lookup).
const twoQueries: RouteDeps = {
  ...deps,
  authenticator: { authenticate: (token) => deps.authenticator.authenticate(token) },
};
mountRoute(app, twoQueries, route('/bench/workspace-two-queries', 'workspace'), async () => ({ ok: true }));

// A service account's JWT, issued by the real token endpoint.
const sa = (await (
  await app.request('/v0/service_accounts', {
    method: 'POST',
    headers: { authorization: `Bearer ${identity.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  })
).json()) as { client_id: string; client_secret: string };
const token = (await (
  await app.request('/oauth/token', {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${sa.client_id}:${sa.client_secret}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ grant_type: 'client_credentials' }),
  })
).json()) as { access_token: string };

const key = identity.apiKey!;
const scenarios: Record<string, { path: string; headers: Record<string, string> }> = {
  bare: { path: '/bench/bare', headers: {} },
  'api key': { path: '/bench/principal', headers: { authorization: `Bearer ${key}` } },
  'api key + version + workspace': {
    path: '/bench/workspace?workspace=default',
    headers: { authorization: `Bearer ${key}`, 'service-version': '2026-04-28' },
  },
  'api key + version + workspace, 2 queries': {
    path: '/bench/workspace-two-queries?workspace=default',
    headers: { authorization: `Bearer ${key}`, 'service-version': '2026-04-28' },
  },
  'api key + implied workspace': { path: '/bench/workspace', headers: { authorization: `Bearer ${key}` } },
  jwt: { path: '/bench/principal', headers: { authorization: `Bearer ${token.access_token}` } },
  'jwt + version + workspace (X-Blaxel-*)': {
    path: '/bench/workspace',
    headers: {
      'x-blaxel-authorization': `Bearer ${token.access_token}`,
      'blaxel-version': '2026-04-28',
      'x-blaxel-workspace': 'default',
    },
  },
};

/** Runs `n` requests; returns [wall µs, CPU µs of this process] per request. */
async function run(path: string, headers: Record<string, string>, n: number): Promise<[number, number]> {
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const res = await app.request(`http://bench${path}`, { headers });
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }
  const wall = Number(process.hrtime.bigint() - started) / 1000 / n;
  const used = process.cpuUsage(cpu);
  return [wall, (used.user + used.system) / n];
}

for (const { path, headers } of Object.values(scenarios)) await run(path, headers, WARMUP);
// Per round, scenarios alternate in small chunks, so load from other processes on this shared
// machine falls on all of them alike; the bare baseline is measured in the same round. CPU time of
// this process is reported beside wall time: it is what the pipeline costs, whatever else runs.
const CHUNK = 100;
type Series = { wall: number[]; cpu: number[]; addedWall: number[]; addedCpu: number[] };
const series: Record<string, Series> = Object.fromEntries(
  Object.keys(scenarios).map((k) => [k, { wall: [], cpu: [], addedWall: [], addedCpu: [] }]),
);
for (let round = 0; round < ROUNDS; round++) {
  const totals = Object.fromEntries(Object.keys(scenarios).map((k) => [k, [0, 0]])) as Record<
    string,
    number[]
  >;
  for (let done = 0; done < ITERATIONS; done += CHUNK) {
    for (const [name, { path, headers }] of Object.entries(scenarios)) {
      const [wall, cpu] = await run(path, headers, CHUNK);
      totals[name]![0]! += wall * CHUNK;
      totals[name]![1]! += cpu * CHUNK;
    }
  }
  const perRequest = (name: string) => totals[name]!.map((x) => x / ITERATIONS) as [number, number];
  const [bareWall, bareCpu] = perRequest('bare');
  for (const name of Object.keys(scenarios)) {
    const [wall, cpu] = perRequest(name);
    series[name]!.wall.push(wall);
    series[name]!.cpu.push(cpu);
    series[name]!.addedWall.push(wall - bareWall);
    series[name]!.addedCpu.push(cpu - bareCpu);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const f = (x: number) => x.toFixed(1).padStart(6);
const spread = (xs: number[]) => `${f(median(xs))} (${f(Math.min(...xs))}..${f(Math.max(...xs))})`;
const bareWall = median(series.bare!.wall);
const bareCpu = median(series.bare!.cpu);
console.log(
  `api-overhead: ${pgUrl ? 'PostgreSQL' : 'SQLite'}, ${ROUNDS} rounds x ${ITERATIONS} requests per scenario, app.request() in-process`,
);
console.log(
  'median over rounds (min..max), µs per request; "added" = scenario minus bare in the same round\n',
);
console.log(
  `${'scenario'.padEnd(40)} ${'wall'.padEnd(23)} ${'added wall'.padEnd(23)} ${'CPU'.padEnd(23)} ${'added CPU'.padEnd(23)} ratio (CPU)`,
);
for (const [name, s] of Object.entries(series)) {
  if (name === 'bare') {
    console.log(`${name.padEnd(40)} ${spread(s.wall)} ${'baseline'.padEnd(23)} ${spread(s.cpu)}`);
    continue;
  }
  console.log(
    `${name.padEnd(40)} ${spread(s.wall)} ${spread(s.addedWall)} ${spread(s.cpu)} ${spread(s.addedCpu)} ${(median(s.wall) / bareWall).toFixed(2)}x (${(median(s.cpu) / bareCpu).toFixed(2)}x)`,
  );
}
const worst = (pick: (s: Series) => number[]) =>
  Math.max(
    ...Object.entries(series)
      .filter(([k]) => k !== 'bare')
      .map(([, s]) => median(pick(s))),
  );
console.log(
  `\nlargest median added cost: ${worst((s) => s.addedCpu).toFixed(1)} µs CPU, ${worst((s) => s.addedWall).toFixed(1)} µs wall per request (target < 300 µs): ${worst((s) => s.addedCpu) < 300 ? 'OK' : 'OVER'}`,
);
console.log(
  `load average while running: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} on ${cpus().length} CPUs`,
);

if (pgUrl) await store.db.schema.dropSchema(schema).cascade().execute();
await store.close();
rmSync(dir, { recursive: true, force: true });
