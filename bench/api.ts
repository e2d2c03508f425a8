// Management API latency with a large catalogue (issue 3): 100,000 sandbox records in one
// workspace, inserted directly through the store in batches, then — in-process via app.request(),
// no sockets — first-page, deep-cursor and status-filtered list latency, GET of one sandbox, and
// create throughput, on SQLite and (when a URL is given) PostgreSQL. Baseline measured in the same
// run: GET /health through the same app. Reported: median µs per request over rounds, the spread
// (min..max of the round medians) and the ratio to the baseline. Target: a list page < 5 ms
// median on SQLite.
//
//   node --import tsx bench/api.ts
//   TARMAC_BENCH_DATABASE_URL=postgres://tarmac:tarmac@127.0.0.1:5432/tarmac_test node --import tsx bench/api.ts
import { buildApp } from '@tarmac/platform';
import { openStore, type Store } from '@tarmac/store';
import { sql } from 'kysely';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { bootstrap } from '../apps/platform/src/planes/identity/bootstrap.js';
import { generateSigningJwk, signingKeyFromJwk } from '../apps/platform/src/planes/identity/auth/jwt.js';

const RECORDS = Number(process.env.RECORDS ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const ITERATIONS = Number(process.env.ITERATIONS ?? 200);
const CREATES = Number(process.env.CREATES ?? 300);
const BATCH = 1000;

interface Result {
  scenario: string;
  median: number;
  min: number;
  max: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function seed(store: Store, workspace: string, actor: string): Promise<void> {
  const start = Date.parse('2026-01-01T00:00:00Z');
  const spec = JSON.stringify({
    region: 'local',
    runtime: { image: 'blaxel/base-image:latest', memory: 2048, ports: [{ target: 3000, protocol: 'HTTP' }] },
  });
  for (let offset = 0; offset < RECORDS; offset += BATCH) {
    const rows = [];
    for (let i = offset; i < Math.min(RECORDS, offset + BATCH); i++) {
      const at = new Date(start + i * 1000).toISOString();
      // 90% DEPLOYED, 5% FAILED, 5% DEPLOYING: the status filter has to skip most rows.
      const status = i % 20 === 0 ? 'FAILED' : i % 20 === 1 ? 'DEPLOYING' : 'DEPLOYED';
      rows.push({
        id: randomUUID(),
        workspace,
        kind: 'sandbox',
        parent: '',
        name: `sb-${String(i).padStart(6, '0')}`,
        display_name: null,
        external_id: `ext-${i}`,
        labels: '{"team":"bench"}',
        spec,
        status,
        state: status === 'DEPLOYED' ? 'STANDBY' : null,
        system: '{}',
        events: JSON.stringify([
          { type: 'deployment', status, message: 'seeded', revision: '1', canaryRevision: '', time: at },
        ]),
        revision: 1,
        created_at: at,
        updated_at: at,
        created_by: actor,
        updated_by: actor,
        terminated_at: null,
      });
    }
    await store.db.insertInto('resources').values(rows).execute();
  }
  if (store.dialect === 'postgres') await sql`analyze resources`.execute(store.db);
  else await sql`analyze`.execute(store.db);
}

async function run(label: string, databaseUrl: string | undefined): Promise<Result[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tarmac-bench-api-'));
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const store = await openStore(
    databaseUrl ? { databaseUrl, schema } : { databaseUrl: join(dir, 'tarmac.db') },
  );
  try {
    const identity = await bootstrap(store, { mintKey: true, now: () => new Date() });
    const app = buildApp({
      store,
      // Logs serialised as in production, to a sink, so their cost is in every scenario.
      logger: pino({ level: 'info' }, { write: () => {} }),
      signingKey: await signingKeyFromJwk(await generateSigningJwk()),
      cursorSecret: new Uint8Array(randomBytes(32)),
      secretKey: new Uint8Array(randomBytes(32)),
      apiUrl: () => 'http://bench',
      version: 'bench',
    });
    const headers = {
      authorization: `Bearer ${identity.apiKey}`,
      'service-version': '2026-04-28',
      'content-type': 'application/json',
    };
    const get = async (path: string) => {
      const res = await app.request(path, { headers });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<{ data?: unknown[]; meta?: { nextCursor: string } }>;
    };

    const t0 = performance.now();
    await seed(store, identity.workspace, identity.adminId);
    process.stderr.write(
      `${label}: seeded ${RECORDS} sandboxes in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
    );

    // A cursor deep in the list (~90% in), reached by walking pages as a client would.
    let cursor = '';
    let walked = 0;
    while (walked < RECORDS * 0.9) {
      const page = await get(`/v0/sandboxes?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
      walked += page.data!.length;
      cursor = page.meta!.nextCursor;
    }

    const scenarios: [string, string][] = [
      ['baseline GET /health', '/health'],
      ['list first page (50)', '/v0/sandboxes'],
      ['list deep cursor (~90k in, 50)', `/v0/sandboxes?cursor=${cursor}`],
      ['list status=FAILED (5%)', '/v0/sandboxes?status=FAILED'],
      ['list sort=name:asc (50)', '/v0/sandboxes?sort=name:asc'],
      ['GET /v0/sandboxes/{name}', `/v0/sandboxes/sb-${String(Math.floor(RECORDS / 2)).padStart(6, '0')}`],
    ];
    const results: Result[] = [];
    for (const [scenario, path] of scenarios) {
      for (let i = 0; i < 50; i++) await get(path); // warm-up
      const rounds: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const samples: number[] = [];
        for (let i = 0; i < ITERATIONS; i++) {
          const s = performance.now();
          await get(path);
          samples.push((performance.now() - s) * 1000);
        }
        rounds.push(median(samples));
      }
      results.push({ scenario, median: median(rounds), min: Math.min(...rounds), max: Math.max(...rounds) });
    }

    // Create throughput: sequential POSTs of new names (each one also reads, seals, inserts, maps).
    const createRounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const samples: number[] = [];
      for (let i = 0; i < CREATES / ROUNDS; i++) {
        const s = performance.now();
        const res = await app.request('/v0/sandboxes', {
          method: 'POST',
          headers,
          body: JSON.stringify({
            metadata: { name: `new-${r}-${i}` },
            spec: {
              runtime: { image: 'blaxel/base-image:latest', envs: [{ name: 'K', value: 'v', secret: true }] },
            },
          }),
        });
        if (res.status !== 200) throw new Error(`create: ${res.status} ${await res.text()}`);
        samples.push((performance.now() - s) * 1000);
      }
      createRounds.push(median(samples));
    }
    results.push({
      scenario: 'POST /v0/sandboxes (create)',
      median: median(createRounds),
      min: Math.min(...createRounds),
      max: Math.max(...createRounds),
    });
    return results;
  } finally {
    if (databaseUrl && !process.env.KEEP_DB) {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(store.db).catch(() => undefined);
    } else if (databaseUrl) process.stderr.write(`kept schema ${schema}\n`);
    await store.close();
    if (process.env.KEEP_DB) process.stderr.write(`kept ${dir}\n`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

function print(label: string, results: Result[]): void {
  const base = results[0]!.median;
  const rows = results.map((r) => {
    const perSecond = 1e6 / r.median;
    return `  ${r.scenario.padEnd(34)} ${(r.median / 1000).toFixed(3).padStart(8)} ms  spread ${(r.min / 1000).toFixed(3)}..${(r.max / 1000).toFixed(3)} ms  x${(r.median / base).toFixed(1).padStart(5)} baseline  ~${perSecond.toFixed(0)} req/s`;
  });
  process.stdout.write(
    `\n${label} — ${RECORDS} sandboxes, ${ROUNDS} rounds x ${ITERATIONS} requests (median of round medians)\n${rows.join('\n')}\n`,
  );
}

const pgUrl = process.env.TARMAC_BENCH_DATABASE_URL;
if (!process.env.ONLY_PG) print('SQLite', await run('SQLite', undefined));
if (pgUrl) print('PostgreSQL', await run('PostgreSQL', pgUrl));
else process.stdout.write('\nPostgreSQL: skipped (set TARMAC_BENCH_DATABASE_URL)\n');
