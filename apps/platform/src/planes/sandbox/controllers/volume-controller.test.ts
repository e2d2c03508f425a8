// The volume controller on a real store (SQLite, and PostgreSQL when configured) and the real
// engine: a record whose spec.size grew past the allocated volume gets its filesystem grown (the
// engine's size and a storage-grown event), both on a change notice and by the periodic resync.
import { missingCapability, testEngine } from '@tarmac/engine/test-support';
import type { Store } from '@tarmac/store';
import { newResource, testDatabases } from '@tarmac/store/test-support';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap } from '../../identity/bootstrap.js';
import { until } from '../../../test-support/until.js';
import { volumeEngineName } from './engine-ids.js';
import { mutate } from './record-writer.js';
import { VolumeController } from './volume-controller.js';

const missing = missingCapability();
const logger = pino({ level: 'silent' });

for (const db of testDatabases(process.env)) {
  describe.skipIf(missing !== null)(
    `volume controller growth on ${db.name}${missing ? ` (skipped: ${missing})` : ''}`,
    () => {
      const engine = testEngine(undefined);
      const engineNames: string[] = [];
      let store: Store;
      let dispose: () => Promise<void>;
      let ctl: VolumeController;
      let ws = '';

      beforeAll(async () => {
        ({ store, dispose } = await db.open());
        ws = (await bootstrap(store, { mintKey: false, now: () => new Date() })).workspace;
        ctl = new VolumeController({ engine, resources: store.resources, logger });
      });

      afterAll(async () => {
        await ctl?.idle();
        for (const n of engineNames) await engine.deleteVolume(n).catch(() => undefined);
        await dispose?.();
      }, 60_000);

      async function volume(name: string, sizeMB: number) {
        const row = await store.resources.create(
          newResource({
            workspace: ws,
            kind: 'volume',
            name,
            spec: { size: sizeMB },
            status: 'DEPLOYED',
            system: { attachedTo: '' },
            createdBy: 'test',
            updatedBy: 'test',
          }),
        );
        const engineName = volumeEngineName(row.id);
        engineNames.push(engineName);
        await engine.createVolume(engineName, sizeMB); // "allocated on first mount"
        return { row, engineName };
      }
      const engineSize = async (n: string) => (await engine.listVolumes()).find((v) => v.name === n)?.sizeMB;
      const grow = (id: string, size: number) => mutate(store.resources, id, () => ({ spec: { size } }));

      it('grows the filesystem when the record grew, once, with an event', async () => {
        const { row, engineName } = await volume('grow-now', 16);
        await ctl.reconcile(row.id); // same size: nothing to do
        expect((await store.resources.getById(row.id))?.events).toEqual([]);
        await grow(row.id, 40);
        await ctl.reconcile(row.id);
        expect(await engineSize(engineName)).toBe(40);
        const events = (await store.resources.getById(row.id))?.events ?? [];
        expect(events.map((e) => [e.type, e.message])).toEqual([
          ['storage-grown', 'Volume filesystem grown from 16 MB to 40 MB'],
        ]);
        await ctl.reconcile(row.id); // converged: no second event
        expect((await store.resources.getById(row.id))?.events).toHaveLength(1);
      }, 30_000);

      it('resync finds a volume whose record outgrew it (a lost notice)', async () => {
        const { row, engineName } = await volume('grow-resync', 16);
        await grow(row.id, 24);
        await ctl.resync();
        await until('grown', async () => ((await engineSize(engineName)) === 24 ? true : undefined));
      }, 30_000);
    },
  );
}
