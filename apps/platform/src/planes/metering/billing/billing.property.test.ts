// Property (issue "Metering", "What it must show"): for any usage and any window, the sum over any
// grouping (every page) equals the ungrouped total, which equals an independent sum of the samples.
import {
  BILLING_DIMENSIONS,
  GROUP_BY_DIMENSIONS,
  type AccountMetricsResponse,
  type BillingDimension,
} from '@tarmac/contract';
import type { UsageSample } from '@tarmac/store';
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PRICES } from '../prices.js';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';

const BASE = Date.parse('2026-03-01T00:00:00Z');
const HOUR = 3_600_000;
const DIMENSIONS = Object.keys(BILLING_DIMENSIONS) as BillingDimension[];
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

const sampleArb = fc.record({
  workspace: fc.constantFrom('default', 'other', 'third'),
  name: fc.constantFrom('a', 'b', 'c'),
  dimension: fc.constantFrom(...DIMENSIONS),
  hour: fc.integer({ min: 0, max: 24 * 60 }),
  minute: fc.integer({ min: 0, max: 59 }),
  quantity: fc.integer({ min: 1, max: 100_000 }),
});

describe.each(testDatabases(process.env))('metrics totals on $name', (db) => {
  let t: TestPlatform & { dispose(): Promise<void> };
  beforeAll(async () => (t = await openTestPlatform(db)));
  afterAll(async () => t.dispose());

  const pagesOf = async (query: Record<string, string>) => {
    const pages: AccountMetricsResponse[] = [];
    let cursor = '';
    do {
      const params = new URLSearchParams({ ...query, ...(cursor ? { cursor } : {}) });
      const { status, body } = await t.json<AccountMetricsResponse>(
        `/v0/accounts/${t.accountId}/metrics?${params.toString()}`,
      );
      expect(status).toBe(200);
      pages.push(body);
      cursor = body.meta.nextCursor;
    } while (cursor);
    return pages;
  };

  it('sum over any grouping = ungrouped total = sum of the samples in the window', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(sampleArb, { maxLength: 60 }),
        fc.integer({ min: 0, max: 24 * 30 }),
        fc.integer({ min: 1, max: 24 * 400 }),
        fc.shuffledSubarray([...GROUP_BY_DIMENSIONS], { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 7 }),
        async (raw, startHour, lengthHours, groupBy, limit) => {
          run++;
          for (const table of ['metering_samples', 'metering_hourly', 'metering_daily', 'metering_monthly']) {
            await sql`delete from ${sql.table(table)}`.execute(t.store.db);
          }
          const samples: UsageSample[] = raw.map((s, i) => {
            const start = BASE + s.hour * HOUR + s.minute * 60_000;
            return {
              idempotencyKey: `${run}-${i}`,
              accountId: t.accountId,
              workspace: s.workspace,
              resourceType: BILLING_DIMENSIONS[s.dimension].resourceType,
              resourceName: s.name,
              resourceUuid: `${s.workspace}-${s.name}`,
              dimension: s.dimension,
              startAt: new Date(start).toISOString(),
              endAt: new Date(start + 1000).toISOString(),
              quantity: s.quantity,
            };
          });
          await t.store.metering.record(samples, new Date().toISOString());
          // Windows start anywhere within an hour: only hours that start inside count.
          const start = BASE + startHour * HOUR + 17 * 60_000;
          const end = start + lengthHours * HOUR;
          const counted = (s: UsageSample) => {
            const hour = Math.floor(Date.parse(s.startAt) / HOUR) * HOUR;
            return hour >= start && hour < end;
          };
          const expected = samples
            .filter(counted)
            .reduce((sum, s) => sum + s.quantity * DEFAULT_PRICES[s.dimension as BillingDimension], 0);
          const window = { startTime: new Date(start).toISOString(), endTime: new Date(end).toISOString() };

          const [ungrouped] = await pagesOf(window);
          expect(close(ungrouped!.summary.totalCost, expected)).toBe(true);
          const series = ungrouped!.data[0]!.timeseries.reduce((s, p) => s + p.cost, 0);
          expect(close(series, expected)).toBe(true);

          const pages = await pagesOf({ ...window, groupBy: groupBy.join(','), limit: String(limit) });
          const entries = pages.flatMap((p) => p.data);
          const grouped = entries.reduce((s, e) => s + e.summary.cost, 0);
          expect(close(grouped, expected)).toBe(true);
          for (const page of pages) expect(close(page.summary.totalCost, expected)).toBe(true);
          for (const e of entries) {
            expect(
              close(
                e.timeseries.reduce((s, p) => s + p.cost, 0),
                e.summary.cost,
              ),
            ).toBe(true);
          }
          if (groupBy.includes('billing_dimension')) {
            const usage = samples.filter(counted).reduce((s, x) => s + x.quantity, 0);
            expect(entries.reduce((s, e) => s + (e.summary.usage ?? 0), 0)).toBe(usage);
            // totalUsage only when the window's usage is in one unit (issue 14 item 8).
            const units = new Set(
              samples.filter(counted).map((x) => BILLING_DIMENSIONS[x.dimension as BillingDimension].unit),
            );
            for (const page of pages)
              expect(page.summary.totalUsage).toBe(units.size <= 1 ? usage : undefined);
          }
          const keys = entries.map((e) =>
            JSON.stringify([e.workspace, e.resourceType, e.resourceName, e.resourceUuid, e.billingDimension]),
          );
          expect(new Set(keys).size).toBe(keys.length);
        },
      ),
      { numRuns: db.name === 'sqlite' ? 60 : 25 },
    );
  }, 240_000);
});
