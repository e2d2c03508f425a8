// The meter over a real store (both dialects) with a controllable clock: sandboxes and volumes run
// for known times, and usage is checked to the GB-second.
import type { Store } from '@tarmac/store';
import { newResource, testDatabases } from '@tarmac/store/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Meter } from './meter.js';
import { sandboxSource, volumeSource } from './resource-sources.js';

const T0 = Date.parse('2026-05-01T09:59:00.000Z');
const WS = 'default';
const ACCOUNT = 'acc_test';

async function seedWorkspace(store: Store) {
  const at = new Date(T0).toISOString();
  await store.accounts.create({ id: ACCOUNT, name: 'test', createdAt: at });
  await store.principals.create({
    id: 'usr_1',
    kind: 'user',
    accountId: ACCOUNT,
    email: 'a@b.c',
    name: 'a',
    description: null,
    clientSecretHash: null,
    createdAt: at,
    updatedAt: at,
  });
  await store.workspaces.create({
    name: WS,
    id: 'ws-id',
    accountId: ACCOUNT,
    displayName: null,
    labels: {},
    createdAt: at,
    updatedAt: at,
    createdBy: 'usr_1',
    updatedBy: 'usr_1',
  });
}

describe.each(testDatabases(process.env))('meter on $name', (db) => {
  let store: Store;
  let dispose: () => Promise<void>;
  let now = T0;
  const clock = () => now;
  beforeEach(async () => {
    ({ store, dispose } = await db.open());
    await seedWorkspace(store);
    now = T0;
  });
  afterEach(async () => dispose());

  const accountOf = async (ws: string) => (await store.workspaces.get(ws))?.accountId;
  const newMeter = () =>
    new Meter({
      sources: [sandboxSource(store, accountOf), volumeSource(store, accountOf)],
      metering: store.metering,
      now: clock,
    });
  const iso = (ms: number) => new Date(ms).toISOString();
  const createSandbox = (
    name: string,
    memory: number,
    state: string | null,
    extra: { system?: Record<string, unknown> } = {},
  ) =>
    store.resources.create(
      newResource({
        id: `uuid-${name}`,
        workspace: WS,
        name,
        spec: { runtime: { memory } },
        status: 'DEPLOYED',
        state,
        system: extra.system ?? {},
        createdAt: iso(now),
        updatedAt: iso(now),
        createdBy: 'usr_1',
        updatedBy: 'usr_1',
      }),
    );
  const usage = async (uuid: string) => {
    const byDim: Record<string, number> = {};
    for (const s of await store.metering.samplesOf(uuid))
      byDim[s.dimension] = (byDim[s.dimension] ?? 0) + s.quantity;
    return byDim;
  };

  it('charges RUNNING memory as compute and STANDBY memory as snapshot storage, to the GB-second', async () => {
    const meter = newMeter();
    const box = await createSandbox('box', 2048, 'RUNNING');
    await meter.pass(); // first sight at T0: the interval starts now
    now += 90_000; // 90 s RUNNING (crosses 10:00 → two hourly samples)
    const standby = await store.resources.update(box.id, { state: 'STANDBY' });
    await meter.pass();
    now += 30_000; // 30 s STANDBY
    await store.resources.update(box.id, { state: 'RUNNING' }, standby.revision);
    await meter.pass();
    now += 10_000; // 10 s RUNNING, then terminated
    await store.resources.update(box.id, { status: 'TERMINATED', terminatedAt: iso(now) });
    now += 50_000; // after termination nothing more is charged
    await meter.pass();
    await meter.pass();
    // 2 GB × (90 + 10) s = 200 GB-s compute; 2 GB × 30 s = 60 GB-s snapshot.
    expect(await usage(box.id)).toEqual({
      sandbox_compute_runtime_gbs: 200,
      sandbox_snapshot_storage_gbs: 60,
    });
    const samples = await store.metering.samplesOf(box.id);
    expect(samples.slice(0, 2).map((s) => [s.startAt, s.endAt, s.quantity])).toEqual([
      ['2026-05-01T09:59:00.000Z', '2026-05-01T10:00:00.000Z', 120],
      ['2026-05-01T10:00:00.000Z', '2026-05-01T10:00:30.000Z', 60],
    ]);
    expect(samples[0]).toMatchObject({
      accountId: ACCOUNT,
      workspace: WS,
      resourceType: 'sandbox',
      resourceName: 'box',
    });
  });

  it('splits an interval exactly at state-change events recorded in the row', async () => {
    const meter = newMeter();
    const box = await createSandbox('evented', 1024, 'RUNNING');
    await meter.pass();
    // One pass after 100 s; the events say RUNNING until +40 s, STANDBY until +70 s, RUNNING after.
    const event = (type: string, at: number) => ({
      type,
      status: 'DEPLOYED',
      message: '',
      revision: '',
      canaryRevision: '',
      time: iso(at),
    });
    await store.resources.update(box.id, {
      state: 'RUNNING',
      events: [event('Standby', T0 + 40_000), event('Resume', T0 + 70_000)],
    });
    now += 100_000;
    await meter.pass();
    expect(await usage(box.id)).toEqual({
      sandbox_compute_runtime_gbs: 70,
      sandbox_snapshot_storage_gbs: 30,
    });
  });

  it("follows the controller's events: Deployment starts compute, Failure stops it", async () => {
    const meter = newMeter();
    const box = await createSandbox('deploying', 3072, null);
    await store.resources.update(box.id, { status: 'DEPLOYING' });
    await meter.pass();
    const event = (type: string, status: string, at: number) => ({
      type,
      status,
      message: '',
      revision: '',
      canaryRevision: '',
      time: iso(at),
    });
    await store.resources.update(box.id, {
      status: 'DEPLOYED',
      state: 'RUNNING',
      events: [event('Deployment', 'DEPLOYED', T0 + 10_000)],
    });
    now += 30_000;
    await meter.pass();
    await store.resources.update(box.id, {
      status: 'FAILED',
      events: [event('Deployment', 'DEPLOYED', T0 + 10_000), event('Failure', 'FAILED', T0 + 40_000)],
    });
    now += 30_000;
    await meter.pass();
    now += 30_000;
    await meter.pass();
    // 3 GB × 30 s RUNNING (from +10 s to +40 s).
    expect(await usage(box.id)).toEqual({ sandbox_compute_runtime_gbs: 90 });
  });

  it('back-dates a resource first seen after its recorded start, and charges image and volume storage', async () => {
    const meter = newMeter();
    await meter.pass();
    now += 5_000;
    const GiB = 1024 ** 3;
    const box = await createSandbox('late', 512, 'STANDBY', { system: { imageSizeBytes: 2 * GiB } });
    await store.resources.update(box.id, {
      events: [
        {
          type: 'STANDBY',
          status: 'DEPLOYED',
          message: '',
          revision: '',
          canaryRevision: '',
          time: iso(now),
        },
      ],
    });
    const volume = await store.resources.create(
      newResource({
        id: 'uuid-vol',
        workspace: WS,
        kind: 'volume',
        name: 'vol',
        spec: { size: 4096 },
        status: 'DEPLOYED',
        createdAt: iso(now),
        updatedAt: iso(now),
        createdBy: 'usr_1',
        updatedBy: 'usr_1',
      }),
    );
    now += 20_000; // seen 20 s after it was created
    await meter.pass();
    now += 10_000;
    await meter.pass();
    expect(await usage(box.id)).toEqual({ sandbox_snapshot_storage_gbs: 15, sandbox_image_storage_gbs: 60 });
    expect(await usage(volume.id)).toEqual({ volume_storage_gbs: 120 });
  });

  it('never double counts: a second meter (a restart) replaying the same pass adds nothing', async () => {
    const box = await createSandbox('twice', 1024, 'RUNNING');
    const a = newMeter();
    const b = newMeter();
    await a.pass();
    await b.pass();
    now += 60_000;
    expect(await a.pass()).toBe(1);
    expect(await b.pass()).toBe(0); // same resource, dimension and start: same idempotency keys
    expect(await usage(box.id)).toEqual({ sandbox_compute_runtime_gbs: 60 });
  });

  it('keeps the interval open when a write fails, and records it on the next pass', async () => {
    const box = await createSandbox('retry', 1024, 'RUNNING');
    let fail = false;
    const meter = new Meter({
      sources: [sandboxSource(store, accountOf)],
      metering: {
        record: (s, at) => (fail ? Promise.reject(new Error('disk full')) : store.metering.record(s, at)),
      },
      now: clock,
    });
    await meter.pass();
    now += 10_000;
    fail = true;
    await expect(meter.pass()).rejects.toThrow('disk full');
    fail = false;
    now += 5_000;
    await meter.pass();
    expect(await usage(box.id)).toEqual({ sandbox_compute_runtime_gbs: 15 });
  });

  it('counts events once per idempotency key', async () => {
    const meter = newMeter();
    const resource = {
      accountId: ACCOUNT,
      workspace: WS,
      resourceType: 'agent',
      resourceName: 'ag',
      resourceUuid: 'uuid-ag',
    };
    expect(await meter.recordCount(resource, 'agent_async_requests_count', 1, now, 'req-1')).toBe(true);
    expect(await meter.recordCount(resource, 'agent_async_requests_count', 1, now, 'req-1')).toBe(false);
    expect(await meter.recordCount(resource, 'agent_async_requests_count', 1, now, 'req-2')).toBe(true);
    expect(await usage('uuid-ag')).toEqual({ agent_async_requests_count: 2 });
  });
});
