// The billing metrics API through the real app over a real store (spec "Billing metrics API",
// "Authentication" 5, "Errors", "Limits"): parameters, errors, roles, fields, buckets, paging.
import type { AccountMetricsResponse } from '@tarmac/contract';
import type { UsageSample } from '@tarmac/store';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestPlatform, testDatabases, type TestPlatform } from '../../../test-support/harness.js';
import { DEFAULT_PRICES } from '../prices.js';

type Platform = TestPlatform & { dispose(): Promise<void> };
type ErrorBody = { error: string; message: string; details?: { field: string }[] };

const PRICE = DEFAULT_PRICES.sandbox_compute_runtime_gbs;
const VOLUME_PRICE = DEFAULT_PRICES.volume_storage_gbs;

describe.each(testDatabases(process.env))('billing metrics API on $name', (db) => {
  let t: Platform;
  afterEach(async () => t.dispose());

  const metricsPath = (query: Record<string, string>, accountId = t.accountId) =>
    `/v0/accounts/${accountId}/metrics?${new URLSearchParams(query).toString()}`;
  const metrics = (query: Record<string, string>, key?: string) =>
    t.json<AccountMetricsResponse & ErrorBody>(metricsPath(query), key ? { key } : {});

  /** One sample of `quantity` at the start of `hour`, for a resource of the default account. */
  let n = 0;
  const usage = (over: Partial<UsageSample> & { hour: string; quantity: number }): UsageSample => {
    const { hour, ...rest } = over;
    const start = Date.parse(hour);
    return {
      idempotencyKey: `k${n++}`,
      accountId: t.accountId,
      workspace: 'default',
      resourceType: 'sandbox',
      resourceName: 'box',
      resourceUuid: 'uuid-box',
      dimension: 'sandbox_compute_runtime_gbs',
      startAt: new Date(start).toISOString(),
      endAt: new Date(start + 60_000).toISOString(),
      ...rest,
    };
  };
  const seed = (samples: UsageSample[]) => t.store.metering.record(samples, new Date().toISOString());

  const addWorkspace = async (name: string) => {
    const at = new Date().toISOString();
    await t.store.workspaces.create({
      name,
      id: crypto.randomUUID(),
      accountId: t.accountId,
      displayName: null,
      labels: {},
      createdAt: at,
      updatedAt: at,
      createdBy: t.adminId,
      updatedBy: t.adminId,
    });
  };

  const day = { startTime: '2026-05-01T00:00:00Z', endTime: '2026-05-02T00:00:00Z' };

  describe('parameters and errors (spec "Errors": billing rows)', () => {
    it.each([
      [{ endTime: day.endTime }, 'startTime'],
      [{ startTime: day.startTime }, 'endTime'],
      [{ ...day, startTime: '2026-05-01' }, 'startTime'],
      [{ ...day, startTime: '2026-05-01T00:00:00+02:00' }, 'startTime'],
      [{ ...day, endTime: '2026-02-30T00:00:00Z' }, 'endTime'],
      [{ ...day, endTime: 'yesterday' }, 'endTime'],
      [{ ...day, endTime: day.startTime }, 'endTime'],
      [{ ...day, resolution: 'minutely' }, 'resolution'],
      [
        { startTime: '2026-05-01T00:00:00Z', endTime: '2026-05-08T00:00:01Z', resolution: 'hourly' },
        'resolution',
      ],
      [
        { startTime: '2026-01-01T00:00:00Z', endTime: '2026-04-01T00:00:01Z', resolution: 'daily' },
        'resolution',
      ],
      [
        { startTime: '2025-01-01T00:00:00Z', endTime: '2026-01-01T00:00:01Z', resolution: 'weekly' },
        'resolution',
      ],
      [{ ...day, groupBy: 'workspace,resource_type,resource_name,billing_dimension' }, 'groupBy'],
      [{ ...day, groupBy: 'resource_type,colour' }, 'groupBy'],
      [{ ...day, groupBy: 'resource_type,resource_type' }, 'groupBy'],
      [{ ...day, groupBy: '' }, 'groupBy'],
      [{ ...day, label: 'team=a' }, 'label'],
      [{ ...day, unit: 'gbs' }, 'unit'],
      [{ ...day, limit: '0' }, 'limit'],
      [{ ...day, limit: 'ten' }, 'limit'],
      [{ ...day, billingDimension: 'gpu_hours' }, 'billingDimension'],
    ])('400 for %o, naming %s', async (query, field) => {
      t = await openTestPlatform(db);
      const { status, body } = await metrics(query as Record<string, string>);
      expect(status).toBe(400);
      expect(body.error).toBe('validation_error');
      expect(body.details?.map((d) => d.field)).toContain(`query.${field}`);
      expect(body.message).toContain(field);
    });

    it('accepts a window exactly at each cap, and any window at monthly resolution', async () => {
      t = await openTestPlatform(db);
      const ok: Record<string, string>[] = [
        { startTime: '2026-05-01T00:00:00Z', endTime: '2026-05-08T00:00:00Z', resolution: 'hourly' },
        { startTime: '2026-01-01T00:00:00Z', endTime: '2026-04-01T00:00:00Z', resolution: 'daily' },
        { startTime: '2025-01-01T00:00:00Z', endTime: '2026-01-01T00:00:00Z', resolution: 'weekly' },
        { startTime: '2020-01-01T00:00:00Z', endTime: '2026-01-01T00:00:00Z', resolution: 'monthly' },
        { startTime: '2026-05-01T00:00:00.123Z', endTime: '2026-05-01T06:00:00+00:00' },
      ];
      for (const query of ok) expect((await metrics(query)).status).toBe(200);
      const monthly = await metrics(ok[3]!);
      expect(monthly.body.data[0]!.timeseries).toHaveLength(72);
    });

    it.each([
      ['2026-05-01T00:00:00Z', '2026-05-07T23:59:59Z', 'hourly'],
      ['2026-05-01T00:00:00Z', '2026-05-08T00:00:00Z', 'daily'],
      ['2026-01-01T00:00:00Z', '2026-03-31T23:00:00Z', 'daily'],
      ['2026-01-01T00:00:00Z', '2026-04-01T00:00:00Z', 'weekly'],
      ['2025-01-01T00:00:00Z', '2025-12-31T00:00:00Z', 'weekly'],
      ['2025-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'monthly'],
    ])('picks the resolution by window length: %s → %s is %s', async (startTime, endTime, resolution) => {
      t = await openTestPlatform(db);
      const { status, body } = await metrics({ startTime, endTime });
      expect(status).toBe(200);
      expect(body.resolution).toBe(resolution);
    });

    it('clamps limit to 100 silently', async () => {
      t = await openTestPlatform(db);
      await seed(
        Array.from({ length: 105 }, (_, i) =>
          usage({
            hour: '2026-05-01T10:00:00Z',
            quantity: 1,
            resourceName: `b${String(i).padStart(3, '0')}`,
            resourceUuid: `u${i}`,
          }),
        ),
      );
      const { status, body } = await metrics({ ...day, groupBy: 'resource_uuid', limit: '1000' });
      expect(status).toBe(200);
      expect(body.data).toHaveLength(100);
      expect(body.meta.hasMore).toBe(true);
    });

    it('rejects a tampered cursor and a cursor of another query with 400', async () => {
      t = await openTestPlatform(db);
      await seed([
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 1 }),
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 1, resourceName: 'b2', resourceUuid: 'u2' }),
      ]);
      const first = await metrics({ ...day, groupBy: 'resource_name', limit: '1' });
      const cursor = first.body.meta.nextCursor;
      expect(cursor).not.toBe('');
      expect((await metrics({ ...day, groupBy: 'resource_name', cursor: `${cursor}x` })).status).toBe(400);
      const other = await metrics({ ...day, groupBy: 'resource_type', cursor });
      expect(other.status).toBe(400);
      expect(other.body.error).toBe('cursor_mismatch');
    });
  });

  describe('roles (spec "Authentication" 5)', () => {
    it('lets only account admins filter or group by workspace (403 says access denied)', async () => {
      t = await openTestPlatform(db);
      const member = await t.addUser({ role: 'admin' }); // workspace admin, not account admin
      for (const query of [
        { ...day, workspace: 'default' },
        { ...day, groupBy: 'workspace' },
        { ...day, groupBy: 'billing_dimension,workspace' },
      ]) {
        const denied = await metrics(query, member.apiKey);
        expect(denied.status).toBe(403);
        expect(denied.body.message).toMatch(/access denied/i);
        expect((await metrics(query)).status).toBe(200);
      }
    });

    it('shows other callers only their workspaces; the admin sees every workspace, even a deleted one', async () => {
      t = await openTestPlatform(db);
      await addWorkspace('other');
      await seed([
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 1000 }),
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 3000, workspace: 'other', resourceUuid: 'u-other' }),
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 5000, workspace: 'gone', resourceUuid: 'u-gone' }),
      ]);
      const member = await t.addUser({});
      const mine = await metrics(day, member.apiKey);
      expect(mine.body.summary.totalCost).toBeCloseTo(1000 * PRICE, 12);
      const byName = await metrics({ ...day, groupBy: 'resource_name' }, member.apiKey);
      expect(byName.body.data.map((e) => e.workspace)).toEqual(['default']);
      const admin = await metrics({ ...day, groupBy: 'workspace' });
      expect(admin.body.data.map((e) => [e.workspace, e.summary.cost])).toEqual([
        ['default', 1000 * PRICE],
        ['gone', 5000 * PRICE],
        ['other', 3000 * PRICE],
      ]);
      const filtered = await metrics({ ...day, workspace: 'other' });
      expect(filtered.body.summary.totalCost).toBeCloseTo(3000 * PRICE, 12);
    });

    it('answers 404 for another account and 401 without credentials', async () => {
      t = await openTestPlatform(db);
      const stranger = await t.addAccount({ workspace: 'elsewhere' });
      expect((await t.json(metricsPath(day, stranger.accountId))).status).toBe(404);
      expect((await t.json(`/v0/accounts/${stranger.accountId}/metrics/enums/group-by`)).status).toBe(404);
      expect((await t.json(metricsPath(day), { key: null })).status).toBe(401);
      // The stranger sees its own (empty) account, not ours.
      const own = await t.json<AccountMetricsResponse>(metricsPath(day, stranger.accountId), {
        key: stranger.apiKey,
      });
      expect(own.status).toBe(200);
      expect((await t.json(metricsPath(day), { key: stranger.apiKey })).status).toBe(404);
    });
  });

  describe('response (spec "Response 200 AccountMetricsResponse")', () => {
    it('without groupBy: one entry, every bucket of the window present, empty ones at cost 0, no usage', async () => {
      t = await openTestPlatform(db);
      await seed([
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 7200 }),
        usage({
          hour: '2026-05-01T13:00:00Z',
          quantity: 3600,
          dimension: 'volume_storage_gbs',
          resourceType: 'volume',
        }),
      ]);
      const { status, body } = await metrics({
        startTime: '2026-05-01T09:00:00Z',
        endTime: '2026-05-01T15:00:00Z',
      });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        startTime: '2026-05-01T09:00:00Z',
        endTime: '2026-05-01T15:00:00Z',
        resolution: 'hourly',
        meta: { hasMore: false, nextCursor: '' },
      });
      expect(body.summary.totalUsage).toBeUndefined();
      expect(body.data).toHaveLength(1);
      const [entry] = body.data;
      expect(Object.keys(entry!).sort()).toEqual(['summary', 'timeseries']);
      expect(entry!.timeseries.map((p) => [p.timestamp, p.cost])).toEqual([
        ['2026-05-01T09:00:00.000Z', 0],
        ['2026-05-01T10:00:00.000Z', 7200 * PRICE],
        ['2026-05-01T11:00:00.000Z', 0],
        ['2026-05-01T12:00:00.000Z', 0],
        ['2026-05-01T13:00:00.000Z', 3600 * VOLUME_PRICE],
        ['2026-05-01T14:00:00.000Z', 0],
      ]);
      expect(entry!.timeseries.every((p) => p.usage === undefined)).toBe(true);
      expect(body.summary.totalCost).toBeCloseTo(7200 * PRICE + 3600 * VOLUME_PRICE, 12);
    });

    it('counts an hour in the window when the hour starts inside it (start inclusive, end exclusive)', async () => {
      t = await openTestPlatform(db);
      await seed([
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 100 }),
        usage({ hour: '2026-05-01T12:00:00Z', quantity: 1 }),
      ]);
      const cost = async (startTime: string, endTime: string) =>
        (await metrics({ startTime, endTime })).body.summary.totalCost;
      expect(await cost('2026-05-01T10:00:00Z', '2026-05-01T12:00:00Z')).toBeCloseTo(100 * PRICE, 12);
      expect(await cost('2026-05-01T10:30:00Z', '2026-05-01T12:00:00Z')).toBe(0);
      expect(await cost('2026-05-01T09:00:00Z', '2026-05-01T10:00:00Z')).toBe(0);
      expect(await cost('2026-05-01T11:00:00Z', '2026-05-01T12:00:00.001Z')).toBeCloseTo(1 * PRICE, 12);
    });

    it.each([
      ['workspace', ['workspace']],
      ['resource_type', ['resourceType']],
      ['resource_name', ['workspace', 'resourceType', 'resourceName']],
      ['resource_uuid', ['workspace', 'resourceType', 'resourceName', 'resourceUuid']],
      ['billing_dimension', ['resourceType', 'billingDimension']],
      ['billing_dimension,resource_name', ['workspace', 'resourceType', 'resourceName', 'billingDimension']],
    ])('groupBy=%s fills %o (spec "Which entry fields are filled")', async (groupBy, fields) => {
      t = await openTestPlatform(db);
      await seed([usage({ hour: '2026-05-01T10:00:00Z', quantity: 10 })]);
      const { body } = await metrics({ ...day, groupBy });
      const entry = body.data[0]!;
      const filled = Object.keys(entry).filter((k) => k !== 'summary' && k !== 'timeseries');
      expect(filled.sort()).toEqual([...fields].sort());
      const withUsage = groupBy.includes('billing_dimension');
      expect(entry.summary.usage).toBe(withUsage ? 10 : undefined);
      expect(body.summary.totalUsage).toBe(withUsage ? 10 : undefined);
      expect(entry.timeseries).toHaveLength(24);
      expect(entry.timeseries[10]!.usage).toBe(withUsage ? 10 : undefined);
      if (fields.includes('resourceUuid')) expect(entry.resourceUuid).toBe('uuid-box');
    });

    it('sorts groupBy canonically: the order given does not matter', async () => {
      t = await openTestPlatform(db);
      await seed([
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 10 }),
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 5, dimension: 'sandbox_snapshot_storage_gbs' }),
      ]);
      const a = await metrics({ ...day, groupBy: 'billing_dimension,resource_type' });
      const b = await metrics({ ...day, groupBy: 'resource_type, billing_dimension' });
      expect(a.body).toEqual(b.body);
      expect(a.body.data.map((e) => e.billingDimension)).toEqual([
        'sandbox_compute_runtime_gbs',
        'sandbox_snapshot_storage_gbs',
      ]);
    });

    // Issue 14 item 8: spec "summary.totalUsage … single unit guaranteed".
    it('totalUsage never adds different units: only present when the window has one unit', async () => {
      t = await openTestPlatform(db);
      await seed([
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 7, dimension: 'sandbox_compute_runtime_gbs' }),
        usage({
          hour: '2026-05-01T10:00:00Z',
          quantity: 3,
          resourceType: 'agent',
          dimension: 'agent_async_requests_count',
        }),
      ]);
      const mixed = await metrics({ ...day, groupBy: 'billing_dimension' });
      expect(mixed.status).toBe(200);
      expect(mixed.body.summary.totalUsage).toBeUndefined(); // GB-s and a count: no sum
      expect(mixed.body.data.map((e) => e.summary.usage).sort()).toEqual([3, 7]);
      const one = await metrics({
        ...day,
        groupBy: 'billing_dimension',
        billingDimension: 'agent_async_requests_count',
      });
      expect(one.body.summary.totalUsage).toBe(3);
    });

    it('pages a composite grouping with opaque cursors, covering every group once', async () => {
      t = await openTestPlatform(db);
      await addWorkspace('other');
      const samples: UsageSample[] = [];
      for (const workspace of ['default', 'other'])
        for (const name of ['a', 'b', 'c'])
          for (const dimension of ['sandbox_compute_runtime_gbs', 'sandbox_snapshot_storage_gbs'])
            samples.push(
              usage({
                hour: '2026-05-01T10:00:00Z',
                quantity: 1,
                workspace,
                resourceName: name,
                resourceUuid: `${workspace}-${name}`,
                dimension,
              }),
            );
      await seed(samples);
      const seen: string[] = [];
      let cursor = '';
      let pages = 0;
      do {
        const { status, body } = await metrics({
          ...day,
          groupBy: 'workspace,resource_name,billing_dimension',
          limit: '5',
          ...(cursor ? { cursor } : {}),
        });
        expect(status).toBe(200);
        expect(body.summary.totalUsage).toBe(12);
        for (const e of body.data) seen.push(`${e.workspace}/${e.resourceName}/${e.billingDimension}`);
        cursor = body.meta.nextCursor;
        expect(body.meta.hasMore).toBe(cursor !== '');
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toHaveLength(12);
      expect(new Set(seen).size).toBe(12);
    });

    it('bounds weekly buckets on Mondays and monthly ones on calendar months (UTC)', async () => {
      t = await openTestPlatform(db);
      await seed([
        usage({ hour: '2026-05-10T23:00:00Z', quantity: 1 }),
        usage({ hour: '2026-05-11T00:00:00Z', quantity: 2 }),
      ]);
      const weekly = await metrics({
        startTime: '2026-05-01T00:00:00Z',
        endTime: '2026-06-01T00:00:00Z',
        resolution: 'weekly',
      });
      expect(weekly.body.data[0]!.timeseries.map((p) => [p.timestamp, p.cost / PRICE])).toEqual([
        ['2026-04-27T00:00:00.000Z', 0],
        ['2026-05-04T00:00:00.000Z', expect.closeTo(1, 9)],
        ['2026-05-11T00:00:00.000Z', expect.closeTo(2, 9)],
        ['2026-05-18T00:00:00.000Z', 0],
        ['2026-05-25T00:00:00.000Z', 0],
      ]);
      const monthly = await metrics({
        startTime: '2026-04-15T00:00:00Z',
        endTime: '2026-06-15T00:00:00Z',
        resolution: 'monthly',
        groupBy: 'billing_dimension',
      });
      expect(monthly.body.data[0]!.timeseries.map((p) => [p.timestamp, p.usage])).toEqual([
        ['2026-04-01T00:00:00.000Z', 0],
        ['2026-05-01T00:00:00.000Z', 3],
        ['2026-06-01T00:00:00.000Z', 0],
      ]);
    });
  });

  describe('enumerations', () => {
    it('lists the five groupBy dimensions and the resource types observed in the window', async () => {
      t = await openTestPlatform(db);
      await seed([
        usage({ hour: '2026-05-01T10:00:00Z', quantity: 1 }),
        usage({
          hour: '2026-05-03T10:00:00Z',
          quantity: 1,
          resourceType: 'volume',
          dimension: 'volume_storage_gbs',
        }),
      ]);
      const base = `/v0/accounts/${t.accountId}/metrics/enums`;
      expect((await t.json(`${base}/group-by`)).body).toEqual({
        values: ['workspace', 'resource_type', 'resource_name', 'resource_uuid', 'billing_dimension'],
      });
      expect((await t.json(`${base}/resource-types?${new URLSearchParams(day).toString()}`)).body).toEqual({
        values: ['sandbox'],
      });
      const week = new URLSearchParams({
        startTime: '2026-05-01T00:00:00Z',
        endTime: '2026-05-08T00:00:00Z',
      });
      expect((await t.json(`${base}/resource-types?${week.toString()}`)).body).toEqual({
        values: ['sandbox', 'volume'],
      });
      const missing = await t.json<ErrorBody>(`${base}/resource-types?startTime=2026-05-01T00:00:00Z`);
      expect(missing.status).toBe(400);
      expect(missing.body.message).toContain('endTime');
    });
  });
});
