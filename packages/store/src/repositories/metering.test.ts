// The metering store on both dialects: idempotent appends, rollups in step with the log, grouped
// sums with prices, keyset order, and the within-one-hour rule of samples.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../store.js';
import { testDatabases } from '../test-support/databases.js';
import type { UsageSample } from './metering.js';

const base = {
  accountId: 'acc_1',
  workspace: 'ws-a',
  resourceType: 'sandbox',
  resourceName: 'box',
  resourceUuid: 'uuid-1',
  dimension: 'sandbox_compute_runtime_gbs',
};
const sample = (
  over: Partial<UsageSample> & { startAt: string; endAt: string; quantity: number },
): UsageSample => ({
  ...base,
  idempotencyKey: `${over.resourceUuid ?? base.resourceUuid}/${over.dimension ?? base.dimension}/${over.startAt}`,
  ...over,
});

describe.each(testDatabases(process.env))('metering repository on $name', (db) => {
  let store: Store;
  let dispose: () => Promise<void>;
  beforeEach(async () => ({ store, dispose } = await db.open()));
  afterEach(async () => dispose());

  const all = { from: '2000-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z' };
  const totals = async (grain: 'hour' | 'day' | 'month') =>
    store.metering.aggregate({
      accountId: 'acc_1',
      segments: [{ grain, ...all }],
      filters: {},
      groupColumns: [],
      prices: { sandbox_compute_runtime_gbs: 2 },
    });

  it('counts a retried or replayed sample once, in every rollup', async () => {
    const s = sample({
      startAt: '2026-05-01T10:00:00.000Z',
      endAt: '2026-05-01T10:30:00.000Z',
      quantity: 900,
    });
    expect(await store.metering.record([s], '2026-05-01T10:30:00.000Z')).toBe(1);
    expect(await store.metering.record([s, s], '2026-05-01T10:31:00.000Z')).toBe(0);
    const other = sample({
      startAt: '2026-05-01T10:30:00.000Z',
      endAt: '2026-05-01T11:00:00.000Z',
      quantity: 100,
    });
    expect(await store.metering.record([s, other], '2026-05-01T11:00:00.000Z')).toBe(1);
    for (const grain of ['hour', 'day', 'month'] as const) {
      expect(await totals(grain)).toEqual([{ keys: [], cost: 2000, usage: 1000 }]);
    }
    expect((await store.metering.samplesOf('uuid-1')).map((x) => x.quantity)).toEqual([900, 100]);
  });

  it('rejects a sample that crosses an hour boundary, or is empty, and writes nothing', async () => {
    const crossing = sample({
      startAt: '2026-05-01T10:30:00.000Z',
      endAt: '2026-05-01T11:00:00.001Z',
      quantity: 1,
    });
    await expect(store.metering.record([crossing], '2026-05-01T12:00:00.000Z')).rejects.toThrow(
      /one UTC hour/,
    );
    const empty = sample({
      startAt: '2026-05-01T10:30:00.000Z',
      endAt: '2026-05-01T10:30:00.000Z',
      quantity: 1,
    });
    await expect(store.metering.record([empty], '2026-05-01T12:00:00.000Z')).rejects.toThrow(/one UTC hour/);
    expect(await totals('hour')).toEqual([]);
  });

  it('groups, prices per dimension, orders by key and pages after a key', async () => {
    await store.metering.record(
      [
        sample({
          workspace: 'ws-b',
          resourceName: 'b1',
          resourceUuid: 'u-b1',
          startAt: '2026-05-01T10:00:00.000Z',
          endAt: '2026-05-01T11:00:00.000Z',
          quantity: 10,
        }),
        sample({
          workspace: 'ws-a',
          resourceName: 'a1',
          resourceUuid: 'u-a1',
          startAt: '2026-05-01T10:00:00.000Z',
          endAt: '2026-05-01T11:00:00.000Z',
          quantity: 5,
        }),
        sample({
          workspace: 'ws-a',
          resourceName: 'a1',
          resourceUuid: 'u-a1',
          dimension: 'volume_storage_gbs',
          resourceType: 'volume',
          startAt: '2026-05-02T10:00:00.000Z',
          endAt: '2026-05-02T11:00:00.000Z',
          quantity: 7,
        }),
        sample({
          accountId: 'acc_2',
          workspace: 'ws-z',
          startAt: '2026-05-01T10:00:00.000Z',
          endAt: '2026-05-01T11:00:00.000Z',
          quantity: 99,
        }),
      ],
      '2026-05-03T00:00:00.000Z',
    );
    const q = {
      accountId: 'acc_1',
      segments: [{ grain: 'day' as const, ...all }],
      filters: {},
      groupColumns: ['workspace', 'dimension'] as const,
      prices: { sandbox_compute_runtime_gbs: 1, volume_storage_gbs: 0.5 },
    };
    expect(await store.metering.aggregate(q)).toEqual([
      { keys: ['ws-a', 'sandbox_compute_runtime_gbs'], cost: 5, usage: 5 },
      { keys: ['ws-a', 'volume_storage_gbs'], cost: 3.5, usage: 7 },
      { keys: ['ws-b', 'sandbox_compute_runtime_gbs'], cost: 10, usage: 10 },
    ]);
    expect(
      await store.metering.aggregate({ ...q, after: ['ws-a', 'sandbox_compute_runtime_gbs'], limit: 1 }),
    ).toEqual([{ keys: ['ws-a', 'volume_storage_gbs'], cost: 3.5, usage: 7 }]);
    expect(
      await store.metering.aggregate({
        ...q,
        range: { first: ['ws-a', 'volume_storage_gbs'], last: ['ws-b', 'sandbox_compute_runtime_gbs'] },
        byPeriod: true,
      }),
    ).toEqual([
      { period: '2026-05-02T00:00:00.000Z', keys: ['ws-a', 'volume_storage_gbs'], cost: 3.5, usage: 7 },
      {
        period: '2026-05-01T00:00:00.000Z',
        keys: ['ws-b', 'sandbox_compute_runtime_gbs'],
        cost: 10,
        usage: 10,
      },
    ]);
    expect(
      await store.metering.aggregate({
        ...q,
        workspaces: ['ws-b'],
        filters: { dimension: 'sandbox_compute_runtime_gbs' },
      }),
    ).toEqual([{ keys: ['ws-b', 'sandbox_compute_runtime_gbs'], cost: 10, usage: 10 }]);
    expect(await store.metering.aggregate({ ...q, workspaces: [] })).toEqual([]);
    expect(
      await store.metering.resourceTypes({ accountId: 'acc_1', segments: [{ grain: 'hour', ...all }] }),
    ).toEqual(['sandbox', 'volume']);
    expect(
      await store.metering.resourceTypes({
        accountId: 'acc_1',
        segments: [{ grain: 'hour', from: '2026-05-01T00:00:00.000Z', to: '2026-05-02T00:00:00.000Z' }],
      }),
    ).toEqual(['sandbox']);
  });
});
