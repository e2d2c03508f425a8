// The controllers on a real store (SQLite, and PostgreSQL when configured) and the real runc
// engine: a DEPLOYING record becomes a running sandbox (DEPLOYED/RUNNING), goes to STANDBY when
// idle (frozen cgroup), resumes on touch, reports a dead container as FAILED, and DELETING tears
// everything down to TERMINATED with nothing left on the host.
import { missingCapability, testEngine } from '@tarmac/engine/test-support';
import type { Store } from '@tarmac/store';
import { newResource, testDatabases } from '@tarmac/store/test-support';
import { mkdirSync, renameSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrap } from '../../identity/bootstrap.js';
import { ChangeFeed } from '../../../framework/change-feed.js';
import { until } from '../../../test-support/until.js';
import { startControllers, type Controllers } from './controllers.js';
import { sandboxEngineId } from './engine-ids.js';
import { released } from './live-sandboxes.js';

const missing = missingCapability();
const logger = pino({ level: 'silent' });
/** Shorter than the default 10 s, still well past the 600 ms idle window (standby.ts minAgeMs). */
const MIN_AGE_MS = 3000;

for (const db of testDatabases(process.env)) {
  describe.skipIf(missing !== null)(
    `sandbox controllers on ${db.name}${missing ? ` (skipped: ${missing})` : ''}`,
    () => {
      const engine = testEngine(undefined);
      const changes = new ChangeFeed();
      let store: Store;
      let dispose: () => Promise<void>;
      let ctl: Controllers;
      let ws = '';
      const engineIds: { id: string; ip: string }[] = [];

      beforeAll(async () => {
        ({ store, dispose } = await db.open());
        ws = (await bootstrap(store, { mintKey: false, now: () => new Date() })).workspace;
        await engine.ensureImage('tarmac/base:latest');
        ctl = startControllers({
          engine,
          store,
          changes,
          logger,
          standbyAfterMs: 600,
          standbyMinAgeMs: MIN_AGE_MS,
          resyncMs: 500,
        });
        await ctl.ready;
      }, 900_000);

      afterAll(async () => {
        await ctl?.stop();
        for (const { id } of engineIds) await engine.deleteSandbox(id).catch(() => undefined);
        for (const { id, ip } of engineIds) expect(await engine.leftovers(id, ip)).toEqual([]);
        await engine.network.release().catch(() => false); // the last user removes the test bridge
        await dispose?.();
      }, 60_000);

      async function create(name: string, spec: Record<string, unknown> = {}) {
        const row = await store.resources.create(
          newResource({
            workspace: ws,
            name,
            spec: { runtime: { image: 'blaxel/base-image:latest', memory: 256 }, ...spec },
            createdBy: 'test',
            updatedBy: 'test',
          }),
        );
        changes.publish({ workspace: ws, kind: 'sandbox', name });
        const deployed = await until('DEPLOYED', async () => {
          const r = await store.resources.getById(row.id);
          return r?.status === 'DEPLOYED' || r?.status === 'FAILED' ? r : undefined;
        });
        expect(deployed.status, JSON.stringify(deployed.events)).toBe('DEPLOYED');
        engineIds.push({ id: sandboxEngineId(row.id), ip: String(deployed.system.ip) });
        return deployed;
      }

      it('deploys, falls into STANDBY when idle, resumes on use, and deletes cleanly', async () => {
        const row = await create('life');
        expect(row.state).toBe('RUNNING');
        // The image's stored size, for sandbox_image_storage_gbs (metering ARCHITECTURE.md).
        const image = await engine.ensureImage('tarmac/base:latest');
        expect(image.sizeBytes).toBeGreaterThan(10 * 1024 * 1024);
        expect(row.system.imageSizeBytes).toBe(image.sizeBytes);
        const engineId = sandboxEngineId(row.id);
        const live = ctl.live.get(ws, 'life');
        expect(live?.ip).toBe(row.system.ip);

        // Idle past its window but younger than the minimum age: not frozen yet.
        const booted = Date.parse((await engine.inspect(engineId)).createdAt);
        expect(live?.bootedMs).toBe(booted);
        await new Promise((r) => setTimeout(r, Math.max(0, booted + MIN_AGE_MS - 800 - Date.now())));
        expect((await engine.inspect(engineId)).status).toBe('RUNNING');
        expect((await store.resources.getById(row.id))?.state).toBe('RUNNING');
        const standby = await until('STANDBY', async () => {
          const r = await store.resources.getById(row.id);
          return r?.state === 'STANDBY' ? r : undefined;
        });
        expect(Date.now() - booted).toBeGreaterThanOrEqual(MIN_AGE_MS);
        expect((await engine.inspect(engineId)).status).toBe('FROZEN');
        expect(standby.events.map((e) => e.type)).toContain('Standby');

        // The resume is recorded once the request that woke the sandbox is answered (standby.ts).
        ctl.standby.touch(live!);
        live!.inflight++;
        expect((await engine.inspect(engineId)).status).toBe('RUNNING');
        await new Promise((r) => setTimeout(r, 500)); // three ticks with the request in flight
        expect((await store.resources.getById(row.id))?.state).toBe('STANDBY');
        released(live!, Date.now()); // answered: the record follows at once
        const resumed = await until('RUNNING in the store', async () => {
          const r = await store.resources.getById(row.id);
          return r?.state === 'RUNNING' ? r : undefined;
        });
        expect(resumed.events.at(-1)?.type).toBe('Resume');

        // A request that stays in flight (a stream) does not keep the record behind for long, and
        // the next freeze comes after the Resume event, never before it.
        const again = await until('STANDBY again', async () => {
          const r = await store.resources.getById(row.id);
          return r?.state === 'STANDBY' ? r : undefined;
        });
        expect(again.events.slice(-2).map((e) => e.type)).toEqual(['Resume', 'Standby']);
        ctl.standby.touch(live!);
        live!.inflight++;
        const streaming = await until('RUNNING while a request is in flight', async () => {
          const r = await store.resources.getById(row.id);
          return r?.state === 'RUNNING' ? r : undefined;
        });
        expect(streaming.events.at(-1)?.type).toBe('Resume');
        released(live!, Date.now());

        await store.resources.update(row.id, { status: 'DELETING' });
        changes.publish({ workspace: ws, kind: 'sandbox', name: 'life' });
        const gone = await until('TERMINATED', async () => {
          const r = await store.resources.getById(row.id);
          return r?.status === 'TERMINATED' ? r : undefined;
        });
        expect(gone.terminatedAt).not.toBeNull();
        expect(ctl.live.get(ws, 'life')).toBeUndefined();
        expect(await engine.leftovers(engineId, String(row.system.ip))).toEqual([]);
      }, 30_000);

      it('marks a sandbox whose container died FAILED with an event saying why', async () => {
        const row = await create('dies');
        await engine.stopSandbox(sandboxEngineId(row.id), 0); // killed behind the platform's back
        const failed = await until('FAILED', async () => {
          const r = await store.resources.getById(row.id);
          return r?.status === 'FAILED' ? r : undefined;
        });
        expect(failed.events.at(-1)?.message).toMatch(/stopped/);
        expect(ctl.live.get(ws, 'dies')).toBeUndefined();
      });

      it('a status read that fails (not "does not exist") leaves a live sandbox DEPLOYED', async () => {
        // Issue 19 item 7: EMFILE from the engine's lookups was taken for "container gone". An
        // unreadable runc state.json (a directory in its place: EISDIR) fails the same way.
        const row = await create('unknown');
        const state = join(engine.runc.root, sandboxEngineId(row.id), 'state.json');
        renameSync(state, `${state}.test-away`);
        mkdirSync(state);
        try {
          await new Promise((r) => setTimeout(r, 2000)); // four resync passes at 500 ms
          const r = await store.resources.getById(row.id);
          expect(r?.status, JSON.stringify(r?.events)).toBe('DEPLOYED');
          expect(ctl.live.get(ws, 'unknown')).toBeDefined();
        } finally {
          rmdirSync(state);
          renameSync(`${state}.test-away`, state);
        }
        expect((await engine.inspect(sandboxEngineId(row.id))).status).not.toBe('STOPPED'); // alive (maybe frozen)
      }, 30_000); // a 2 s wait on top of a deploy: more than the default 5 s on a loaded machine

      it('an unknown image fails the deployment with an event', async () => {
        const row = await store.resources.create(
          newResource({
            workspace: ws,
            name: 'badimg',
            spec: { runtime: { image: 'nope/none:1', memory: 256 } },
            createdBy: 'test',
            updatedBy: 'test',
          }),
        );
        changes.publish({ workspace: ws, kind: 'sandbox', name: 'badimg' });
        const failed = await until('FAILED', async () => {
          const r = await store.resources.getById(row.id);
          return r?.status === 'FAILED' ? r : undefined;
        });
        expect(failed.events.at(-1)?.message).toMatch(/image not found/);
      });
    },
  );
}
