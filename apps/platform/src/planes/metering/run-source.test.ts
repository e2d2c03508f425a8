// Agent and MCP-server replicas metered over a real store with a controllable clock: the run
// plane's ReplicaUsage (the real one) reports replicas starting, freezing (STANDBY, the seam the
// scale-to-zero work drives: `phase(engineId, 'standby')`), thawing and stopping, and the meter
// charges each phase exactly from its change time — RUNNING memory to *_compute_runtime_gbs,
// STANDBY memory to sandbox_snapshot_storage_gbs, image bytes to *_image_storage_gbs — and each
// async request once, however often it is reported.
import type { Store } from '@tarmac/store';
import { testDatabases } from '@tarmac/store/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReplicaUsage, type UsageReplica } from '../run/usage/replica-usage.js';
import { Meter } from './meter.js';
import { countAsyncRequests, replicaSource } from './run-source.js';

const T0 = Date.parse('2026-05-01T10:00:00.000Z');
const ACCOUNT = 'acc_run';

describe.each(testDatabases(process.env))('replica metering on $name', (db) => {
  let store: Store;
  let dispose: () => Promise<void>;
  let now = T0;
  beforeEach(async () => {
    ({ store, dispose } = await db.open());
    const at = new Date(T0).toISOString();
    await store.accounts.create({ id: ACCOUNT, name: 'run', createdAt: at });
    await store.workspaces.create({
      name: 'ws',
      id: 'ws-id',
      accountId: ACCOUNT,
      displayName: null,
      labels: {},
      createdAt: at,
      updatedAt: at,
      createdBy: 'usr_1',
      updatedBy: 'usr_1',
    });
    now = T0;
  });
  afterEach(async () => dispose());

  const accountOf = async (ws: string) => (await store.workspaces.get(ws))?.accountId;
  const totals = async (uuid: string) => {
    const out: Record<string, number> = {};
    for (const s of await store.metering.samplesOf(uuid)) {
      expect(s.resourceType).toBe(uuid.startsWith('fn') ? 'mcp_server' : 'agent');
      out[s.dimension] = (out[s.dimension] ?? 0) + s.quantity;
    }
    return out;
  };
  const replica = (engineId: string, over: Partial<UsageReplica> = {}): UsageReplica => ({
    engineId,
    recordId: 'agent-uuid',
    kind: 'agent',
    workspace: 'ws',
    name: 'echo',
    memoryMB: 512,
    image: 'img-a',
    imageBytes: 1024 ** 3 / 4,
    ...over,
  });

  it('charges running, standby and image time from the replicas’ own change times', async () => {
    const usage = new ReplicaUsage();
    const meter = new Meter({
      sources: [replicaSource(usage, accountOf, () => now)],
      metering: store.metering,
      now: () => now,
    });
    now = T0 + 5_000;
    usage.started(replica('rp-1'), now); // 0.5 GB running, 0.25 GB image from T0+5 s
    now = T0 + 15_000;
    usage.phase('rp-1', 'standby', now); // frozen after 10 s running
    now = T0 + 20_000;
    await meter.pass();
    now = T0 + 35_000;
    usage.phase('rp-1', 'running', now); // thawed after 20 s frozen
    usage.started(replica('rp-2', { image: 'img-a' }), now); // same image: stored once
    now = T0 + 45_000;
    usage.stopped('rp-1', now);
    usage.stopped('rp-2', now);
    now = T0 + 60_000;
    await meter.pass();
    await meter.pass();
    const t = await totals('agent-uuid');
    // running: 10 s + 10 s (rp-1) + 10 s (rp-2), 0.5 GB each
    expect(t.agent_compute_runtime_gbs).toBeCloseTo(0.5 * 30, 9);
    // standby: 20 s of 0.5 GB, where a sandbox's STANDBY goes
    expect(t.sandbox_snapshot_storage_gbs).toBeCloseTo(0.5 * 20, 9);
    // image: while any replica existed (T0+5 s .. T0+45 s), one image
    expect(t.agent_image_storage_gbs).toBeCloseTo(0.25 * 40, 9);
    expect(t.mcp_server_compute_runtime_gbs).toBeUndefined();
  });

  it('a function is an mcp_server; a replica adopted after a restart is charged from its adoption', async () => {
    const usage = new ReplicaUsage();
    const meter = new Meter({
      sources: [replicaSource(usage, accountOf, () => now)],
      metering: store.metering,
      now: () => now,
    });
    now = T0 + 1_000;
    usage.started(
      replica('rp-f', { recordId: 'fn-uuid', kind: 'function', name: 'tools', imageBytes: undefined }),
      now,
    );
    now = T0 + 4_000;
    await meter.pass();
    const t = await totals('fn-uuid');
    expect(t.mcp_server_compute_runtime_gbs).toBeCloseTo(0.5 * 3, 9);
    expect(t.mcp_server_image_storage_gbs).toBeUndefined(); // size unknown: not billed
  });

  it('counts each async request once, including those reported before the meter listened', async () => {
    const usage = new ReplicaUsage();
    const meter = new Meter({ sources: [], metering: store.metering, now: () => now });
    const count = { recordId: 'agent-uuid', kind: 'agent' as const, workspace: 'ws', name: 'echo', at: T0 };
    usage.countAsync({ ...count, requestId: 'r1' });
    const errors: unknown[] = [];
    countAsyncRequests(usage, meter, accountOf, (e) => errors.push(e));
    usage.countAsync({ ...count, requestId: 'r2' });
    usage.countAsync({ ...count, requestId: 'r2' }); // replayed: same key
    await new Promise((r) => setTimeout(r, 50));
    expect(errors).toEqual([]);
    expect((await totals('agent-uuid')).agent_async_requests_count).toBe(2);
  });
});
