// Issue 19 item 8: engine containers and volumes that no record owns are removed — for a deleted
// workspace at once, otherwise after a grace — and nothing with a record, nothing younger than the
// grace and nothing of another workspace is touched. Real store, real runc engine in a home of
// its own (the shared test home holds other files' sandboxes, which must never be reaped).
import { missingCapability, testEngine, DEFAULT_TEST_HOME } from '@tarmac/engine/test-support';
import type { Store } from '@tarmac/store';
import { newResource, testDatabases } from '@tarmac/store/test-support';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap } from '../../identity/bootstrap.js';
import { sandboxEngineId, volumeEngineName } from './engine-ids.js';
import { OrphanReaper } from './orphan-reaper.js';

const missing = missingCapability();
const logger = pino({ level: 'silent' });
const db = testDatabases(process.env)[0]!;

describe.skipIf(missing !== null)(`orphan reaper${missing ? ` (skipped: ${missing})` : ''}`, () => {
  const home = mkdtempSync(join(tmpdir(), 'tarmac-orphan-reaper-'));
  const engine = testEngine(home, { imageDir: join(DEFAULT_TEST_HOME, 'images') });
  let store: Store;
  let dispose: () => Promise<void>;
  let ws = '';
  const made: { id: string; ip: string }[] = [];

  beforeAll(async () => {
    ({ store, dispose } = await db.open());
    ws = (await bootstrap(store, { mintKey: false, now: () => new Date() })).workspace;
    await engine.ensureImage('tarmac/base:latest');
  }, 900_000);

  afterAll(async () => {
    for (const { id } of made) await engine.deleteSandbox(id).catch(() => undefined);
    for (const { id, ip } of made) expect(await engine.leftovers(id, ip)).toEqual([]);
    await engine.network.release().catch(() => false); // the last user removes the test bridge
    await dispose?.();
    rmSync(home, { recursive: true, force: true });
  }, 60_000);

  async function record(name: string): Promise<string> {
    const row = await store.resources.create(
      newResource({ workspace: ws, name, status: 'DEPLOYED', createdBy: 'test', updatedBy: 'test' }),
    );
    return row.id;
  }

  async function container(recordId: string, workspace: string): Promise<string> {
    const id = sandboxEngineId(recordId);
    const info = await engine.createSandbox({
      id,
      image: 'tarmac/base:latest',
      memoryMB: 128,
      labels: { workspace, sandbox: 'x', record: recordId },
    });
    made.push({ id, ip: info.ip });
    return id;
  }

  it('removes containers without a record of a deleted workspace at once, and nothing else', async () => {
    const kept = await container(await record('kept'), ws);
    const orphanId = `gone-${Math.random().toString(36).slice(2)}`;
    const orphan = await container(orphanId, ws); // its record never existed / was cascaded away
    const otherWs = await container(`other-${Math.random().toString(36).slice(2)}`, 'someone-else');
    const reaper = new OrphanReaper({ engine, resources: store.resources, logger, graceMs: 3_600_000 });

    expect(await reaper.reap({ workspace: ws })).toEqual([orphan]);
    const left = (await engine.list()).map((i) => i.id).sort();
    expect(left).toEqual([kept, otherWs].sort());
    const o = made.find((m) => m.id === orphan)!;
    expect(await engine.leftovers(o.id, o.ip)).toEqual([]);

    // A periodic pass respects the grace: the other workspace's orphan is too young to take...
    expect(await reaper.reap()).toEqual([]);
    // ...and is taken once it is older than the grace.
    const later = new OrphanReaper({ engine, resources: store.resources, logger, graceMs: 0 });
    expect(await later.reap()).toEqual([otherWs]);
    expect((await engine.list()).map((i) => i.id)).toEqual([kept]);
  });

  it("leaves the warm pool's members alone: no record yet by design (issue 20)", async () => {
    const poolRecord = `pool-${Math.random().toString(36).slice(2)}`;
    const member = await container(poolRecord, '');
    const pooled = new Set([poolRecord]);
    const reaper = new OrphanReaper({
      engine,
      resources: store.resources,
      logger,
      graceMs: 0,
      isPooled: (id) => pooled.has(id),
    });
    expect(await reaper.reap()).not.toContain(member);
    expect((await engine.list()).map((i) => i.id)).toContain(member);
    // Once the pool no longer owns it (a crash left it, say), it is an orphan like any other.
    pooled.clear();
    expect(await reaper.reap()).toContain(member);
  });

  it('removes a volume without a record only after it has been seen unowned for the grace', async () => {
    let clock = Date.now();
    const owned = volumeEngineName('no-such-volume-record');
    await engine.createVolume(owned, 16);
    const reaper = new OrphanReaper({
      engine,
      resources: store.resources,
      logger,
      graceMs: 1000,
      now: () => clock,
    });
    expect(await reaper.reap()).not.toContain(owned);
    clock += 1000;
    expect(await reaper.reap()).toContain(owned);
    expect((await engine.listVolumes()).map((v) => v.name)).not.toContain(owned);
  });
});
