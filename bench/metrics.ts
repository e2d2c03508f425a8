// Billing metrics benchmark (issue 8): one year of hourly usage for 10,000 resources across 20
// workspaces, written straight into the rollups, then
//   1. a year at monthly resolution grouped by workspace and billing dimension,
//   2. 7 days at hourly resolution grouped by resource name (first page of 100),
//   3. the ingest rate of the meter's write path (samples per second).
// Each measurement is compared with a baseline measured in the same run (a ratio):
//   1. the same year answered from the hourly rollup alone (what the daily/monthly rollups save),
//   2. a bare count of the hourly rows of the 7 days (the least work touching those rows),
//   3. inserting the same samples into the sample log alone (the cost of keeping rollups in step).
// Run: npx tsc -b packages/contract packages/store && node --import tsx bench/metrics.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BILLING_DIMENSIONS, type AccountMetricsQuery, type BillingDimension } from '@tarmac/contract';
import { openStore, periodOf, type Store, type UsageSample } from '@tarmac/store';
import { sql } from 'kysely';
import { MetricsQueryEngine } from '../apps/platform/src/planes/metering/query-engine.js';
import { DEFAULT_PRICES } from '../apps/platform/src/planes/metering/prices.js';

const ACCOUNT = 'acc_bench';
const RESOURCES = 10_000;
const WORKSPACES = 20;
const YEAR_START = Date.UTC(2025, 0, 1);
const DAYS = 365;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const RUNS = Number(process.env.BENCH_RUNS ?? 15);

/** Deterministic PRNG (mulberry32) so every run generates the same data. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Resource {
  workspace: string;
  type: string;
  name: string;
  uuid: string;
  dims: BillingDimension[];
}

/**
 * The population: 60% sandboxes (compute while RUNNING, snapshot while STANDBY), 15% agents,
 * 10% jobs, 10% MCP servers (compute), 5% volumes (storage every hour of a 30–120 day life).
 * Workloads are active on ~15% of days, 1–5 hours on an active day.
 */
function population(random: () => number): Resource[] {
  const out: Resource[] = [];
  for (let i = 0; i < RESOURCES; i++) {
    const r = random();
    const [type, dims]: [string, BillingDimension[]] =
      r < 0.6
        ? ['sandbox', ['sandbox_compute_runtime_gbs', 'sandbox_snapshot_storage_gbs']]
        : r < 0.75
          ? ['agent', ['agent_compute_runtime_gbs']]
          : r < 0.85
            ? ['job', ['job_compute_runtime_gbs']]
            : r < 0.95
              ? ['mcp_server', ['mcp_server_compute_runtime_gbs']]
              : ['volume', ['volume_storage_gbs']];
    out.push({
      workspace: `ws-${String(i % WORKSPACES).padStart(2, '0')}`,
      type,
      name: `${type}-${i}`,
      uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      dims,
    });
  }
  return out;
}

type Row = {
  account_id: string;
  period: string;
  workspace: string;
  resource_type: string;
  resource_name: string;
  resource_uuid: string;
  dimension: string;
  quantity: number;
};

async function insertRows(store: Store, table: string, rows: Row[]): Promise<void> {
  const BATCH = 400; // 8 columns × 400 rows stays under SQLite's variable limit
  await store.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += BATCH) {
      const chunk = rows.slice(i, i + BATCH);
      const values = chunk.map(
        (r) =>
          sql`(${r.account_id}, ${r.period}, ${r.workspace}, ${r.resource_type}, ${r.resource_name}, ${r.resource_uuid}, ${r.dimension}, ${r.quantity})`,
      );
      await sql`insert into ${sql.table(table)} (account_id, period, workspace, resource_type, resource_name, resource_uuid, dimension, quantity) values ${sql.join(values)}`.execute(
        trx,
      );
    }
  });
}

/** Writes the year into the hourly, daily and monthly rollups (consistent sums), in bulk. */
async function generate(store: Store): Promise<{ hourly: number; daily: number; monthly: number }> {
  const random = rng(42);
  const resources = population(random);
  let hourly: Row[] = [];
  const daily = new Map<string, Row>();
  const monthly = new Map<string, Row>();
  let hourlyCount = 0;
  const add = (map: Map<string, Row>, row: Row) => {
    const key = `${row.period}|${row.resource_uuid}|${row.dimension}`;
    const found = map.get(key);
    if (found) found.quantity += row.quantity;
    else map.set(key, { ...row });
  };
  for (const res of resources) {
    const base = {
      account_id: ACCOUNT,
      workspace: res.workspace,
      resource_type: res.type,
      resource_name: res.name,
      resource_uuid: res.uuid,
    };
    const hours: number[] = [];
    if (res.type === 'volume') {
      const first = Math.floor(random() * (DAYS - 30));
      const life = 30 + Math.floor(random() * 90);
      for (let d = first; d < Math.min(DAYS, first + life); d++)
        for (let h = 0; h < 24; h++) hours.push(YEAR_START + d * DAY + h * HOUR);
    } else {
      for (let d = 0; d < DAYS; d++) {
        if (random() >= 0.15) continue;
        const count = 1 + Math.floor(random() * 5);
        const first = Math.floor(random() * (24 - count));
        for (let h = first; h < first + count; h++) hours.push(YEAR_START + d * DAY + h * HOUR);
      }
    }
    for (const at of hours) {
      for (const dimension of res.dims) {
        const quantity = Math.round(random() * 3600 * 4 * 1000) / 1000; // up to 4 GB for the hour
        const row: Row = { ...base, period: periodOf('hour', at), dimension, quantity };
        hourly.push(row);
        add(daily, { ...row, period: periodOf('day', at) });
        add(monthly, { ...row, period: periodOf('month', at) });
      }
    }
  }
  // Key order (period first, like the meter's time-ordered writes) keeps B-tree inserts sequential.
  const byKey = (a: Row, b: Row) =>
    a.period < b.period
      ? -1
      : a.period > b.period
        ? 1
        : a.resource_uuid < b.resource_uuid
          ? -1
          : a.resource_uuid > b.resource_uuid
            ? 1
            : a.dimension < b.dimension
              ? -1
              : 1;
  hourly.sort(byKey);
  hourlyCount = hourly.length;
  for (let i = 0; i < hourly.length; i += 200_000)
    await insertRows(store, 'metering_hourly', hourly.slice(i, i + 200_000));
  hourly = [];
  await insertRows(store, 'metering_daily', [...daily.values()].sort(byKey));
  await insertRows(store, 'metering_monthly', [...monthly.values()].sort(byKey));
  return { hourly: hourlyCount, daily: daily.size, monthly: monthly.size };
}

async function measure(runs: number, work: () => Promise<unknown>): Promise<number[]> {
  await work(); // warm-up: page cache and statement cache
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
const q = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const fmt = (xs: number[]) =>
  `median ${median(xs).toFixed(1)} ms (p10 ${q(xs, 0.1).toFixed(1)}, p90 ${q(xs, 0.9).toFixed(1)}, min ${xs[0]!.toFixed(1)}, max ${xs[xs.length - 1]!.toFixed(1)})`;

function query(
  over: Partial<AccountMetricsQuery> & Pick<AccountMetricsQuery, 'startTime' | 'endTime'>,
): AccountMetricsQuery {
  return { limit: 100, ...over } as AccountMetricsQuery;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tarmac-bench-'));
  const store = await openStore({ databaseUrl: join(dir, 'bench.db') });
  try {
    console.log(
      `generating: ${RESOURCES} resources, ${WORKSPACES} workspaces, ${DAYS} days (dense would be ${(RESOURCES * DAYS * 24).toLocaleString('en')} resource-hours)`,
    );
    const t0 = performance.now();
    const counts = await generate(store);
    await sql`analyze`.execute(store.db);
    console.log(
      `generated rollup rows: hourly ${counts.hourly.toLocaleString('en')}, daily ${counts.daily.toLocaleString('en')}, monthly ${counts.monthly.toLocaleString('en')} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    const engine = new MetricsQueryEngine(store.metering, DEFAULT_PRICES);
    const admin = { accountId: ACCOUNT, workspaces: undefined };
    const year = { startTime: '2025-01-01T00:00:00Z', endTime: '2026-01-01T00:00:00Z' };

    console.log(`\n1. one year, monthly, groupBy=workspace,billing_dimension (${RUNS} runs)`);
    const yearQuery = query({ ...year, resolution: 'monthly', groupBy: ['workspace', 'billing_dimension'] });
    const first = await engine.query(yearQuery, admin, undefined);
    const yearTimes = await measure(RUNS, () => engine.query(yearQuery, admin, undefined));
    const prices = DEFAULT_PRICES;
    // Fewer runs: each reads all 3.4M hourly rows.
    const yearFromHourly = await measure(Math.min(RUNS, 5), () =>
      store.metering.aggregate({
        accountId: ACCOUNT,
        segments: [{ grain: 'hour', from: '2025-01-01T00:00:00.000Z', to: '2026-01-01T00:00:00.000Z' }],
        filters: {},
        groupColumns: ['workspace', 'dimension'],
        byPeriod: true,
        prices,
      }),
    );
    console.log(
      `   rollups (month/day/hour): ${fmt(yearTimes)}; ${first.response.data.length} groups, total $${first.response.summary.totalCost.toFixed(2)}`,
    );
    console.log(`   baseline, hourly rollup only: ${fmt(yearFromHourly)}`);
    console.log(
      `   ratio baseline/rollups: ${(median(yearFromHourly) / median(yearTimes)).toFixed(1)}x faster`,
    );

    console.log(`\n2. 7 days, hourly, groupBy=resource_name, first page of 100 (${RUNS} runs)`);
    const week = { startTime: '2025-06-02T00:00:00Z', endTime: '2025-06-09T00:00:00Z' };
    const weekQuery = query({ ...week, resolution: 'hourly', groupBy: ['resource_name'] });
    const page = await engine.query(weekQuery, admin, undefined);
    const weekTimes = await measure(RUNS, () => engine.query(weekQuery, admin, undefined));
    const bare = await measure(RUNS, () =>
      sql`select count(*) as n from metering_hourly where account_id = ${ACCOUNT} and period >= ${'2025-06-02T00:00:00.000Z'} and period < ${'2025-06-09T00:00:00.000Z'}`.execute(
        store.db,
      ),
    );
    const rowsInWeek = await sql<{
      n: number;
    }>`select count(*) as n from metering_hourly where account_id = ${ACCOUNT} and period >= ${'2025-06-02T00:00:00.000Z'} and period < ${'2025-06-09T00:00:00.000Z'}`.execute(
      store.db,
    );
    console.log(
      `   query: ${fmt(weekTimes)}; ${page.response.data.length} groups on the page, hasMore ${page.hasMore}, ${rowsInWeek.rows[0]!.n} hourly rows in the window`,
    );
    console.log(`   baseline, bare count of those rows: ${fmt(bare)}`);
    console.log(`   ratio query/baseline: ${(median(weekTimes) / median(bare)).toFixed(1)}x`);

    console.log('\n3. ingest through the meter write path (log + 3 rollups, idempotent)');
    const resources = population(rng(7)).slice(0, 2000);
    const batchSize = 1000;
    const batches = 20;
    let serial = 0;
    const makeBatch = (b: number): UsageSample[] =>
      Array.from({ length: batchSize }, (_, i) => {
        const res = resources[(b * batchSize + i) % resources.length]!;
        const start = Date.UTC(2026, 0, 1) + (b * batchSize + i) * 1000;
        return {
          idempotencyKey: `bench-${serial++}`,
          accountId: ACCOUNT,
          workspace: res.workspace,
          resourceType: res.type,
          resourceName: res.name,
          resourceUuid: res.uuid,
          dimension: res.dims[0]!,
          startAt: new Date(start).toISOString(),
          endAt: new Date(start + 500).toISOString(),
          quantity: 1,
        };
      });
    const recordTimes: number[] = [];
    const logOnlyTimes: number[] = [];
    for (let b = 0; b < batches; b++) {
      const batch = makeBatch(b);
      let start = performance.now();
      await store.metering.record(batch, new Date().toISOString());
      recordTimes.push(performance.now() - start);
      const copy = makeBatch(b).map((s) => ({ ...s, idempotencyKey: `${s.idempotencyKey}-log` }));
      start = performance.now();
      await store.db.transaction().execute(async (trx) => {
        for (let i = 0; i < copy.length; i += 500) {
          const values = copy
            .slice(i, i + 500)
            .map(
              (s) =>
                sql`(${s.idempotencyKey}, ${s.accountId}, ${s.workspace}, ${s.resourceType}, ${s.resourceName}, ${s.resourceUuid}, ${s.dimension}, ${s.startAt}, ${s.endAt}, ${s.quantity}, ${s.startAt})`,
            );
          await sql`insert into metering_samples (idempotency_key, account_id, workspace, resource_type, resource_name, resource_uuid, dimension, start_at, end_at, quantity, recorded_at) values ${sql.join(values)}`.execute(
            trx,
          );
        }
      });
      logOnlyTimes.push(performance.now() - start);
    }
    const replay = await measure(5, () =>
      store.metering.record(
        makeBatch(0).map((s, i) => ({ ...s, idempotencyKey: `bench-${i}` })),
        new Date().toISOString(),
      ),
    );
    const rate = (xs: number[]) => (batchSize / (median([...xs].sort((a, b) => a - b)) / 1000)).toFixed(0);
    recordTimes.sort((a, b) => a - b);
    logOnlyTimes.sort((a, b) => a - b);
    console.log(
      `   record(), ${batches} batches of ${batchSize}: ${fmt(recordTimes)} per batch → ${rate(recordTimes)} samples/s (median batch)`,
    );
    console.log(
      `   baseline, sample log insert only: ${fmt(logOnlyTimes)} per batch → ${rate(logOnlyTimes)} samples/s`,
    );
    console.log(`   ratio record/log-only: ${(median(recordTimes) / median(logOnlyTimes)).toFixed(2)}x`);
    console.log(`   replay of an already-recorded batch (all duplicates, nothing added): ${fmt(replay)}`);
    const single = await measure(200, async () => {
      const [s] = makeBatch(1000 + serial);
      await store.metering.record(
        [{ ...s!, idempotencyKey: `single-${serial++}` }],
        new Date().toISOString(),
      );
    });
    console.log(
      `   record() of 1 sample per call: ${fmt(single)} → ${(1000 / median(single)).toFixed(0)} samples/s`,
    );
    void BILLING_DIMENSIONS;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
