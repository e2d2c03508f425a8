// Issue 14 item 6: snapshots and fork (reference control-plane §1.6). A snapshot is the sandbox's
// files — its writable layer and its volumes' contents — copied while it is frozen (no process
// memory). Writes after the snapshot are not in a fork of it; a fork of the live state has them; a
// fork shares no writable state with its source (not even the volume); another workspace cannot
// see, delete or fork a snapshot (404); delete answers 204; snapshots go with their sandbox.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox, Tarmac } from '@tarmac/sdk';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  exec,
  getSandbox,
  json,
  missingCapability,
  startSandboxPlatform,
  waitFor,
  waitSandbox,
} from './support.js';

const missing = missingCapability();
const ENV = { TARMAC_BRIDGE: 'tarmacsnp0', TARMAC_SUBNET: '10.154.0.0/16' };
const OTHER = 'snap-outsider';

interface SnapshotView {
  id: string;
  name: string;
  sandboxName: string;
  status: string;
  sizeBytes: number;
  contents: string;
}

describe.skipIf(missing !== null)(
  `sandbox snapshots and fork${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let p: RunningPlatform | undefined;
    const names = ['snap-src', 'snap-fork', 'snap-live'];
    const volumes = ['snapvol'];
    let snapshotId = '';
    const sh = async (sandbox: string, command: string) => {
      const r = await exec(p!, sandbox, command);
      return (r.stdout ?? '').trim();
    };
    const post = (path: string, body: unknown) =>
      p!.api(path, { method: 'POST', body: JSON.stringify(body) });

    beforeAll(async () => {
      p = await startSandboxPlatform({ env: ENV });
      const res = await post('/v0/volumes', { metadata: { name: 'snapvol' }, spec: { size: 64 } });
      expect(res.status, await res.clone().text()).toBe(200);
    }, 15 * 60_000);

    afterAll(async () => {
      if (!p) return;
      const ws = p.credentials.workspace;
      // A second workspace exists from the last test on: name ours on every call from here.
      for (const n of names) {
        await p.api(`/v0/sandboxes/${n}?workspace=${ws}`, { method: 'DELETE' }).catch(() => undefined);
      }
      for (const n of names) {
        await waitSandbox(p, n, (s) => s.status === 'TERMINATED', `${n} TERMINATED`, 60_000).catch(
          () => undefined,
        );
      }
      await p.api(`/v0/workspaces/${OTHER}`, { method: 'DELETE' }).catch(() => undefined);
      // Snapshots went with their sandbox: nothing left on disk.
      const dir = join(p.home, 'snapshots');
      expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
      await cleanUp(p, names, volumes);
    }, 180_000);

    it('snapshots the files, and a fork of it has them but not the later writes', async () => {
      await createSandbox(p!, 'snap-src', { volumes: [{ name: 'snapvol', mountPath: '/data' }] });
      await sh('snap-src', 'echo one > /home/a.txt && echo vol > /data/v.txt && rm /etc/issue');
      const made = await post('/v0/sandboxes/snap-src/snapshots', { name: 'first' });
      expect(made.status, await made.clone().text()).toBe(200);
      const snap = await json<SnapshotView>(made);
      expect(snap).toMatchObject({
        name: 'first',
        sandboxName: 'snap-src',
        status: 'ready',
        contents: 'filesystem',
      });
      expect(snap.sizeBytes).toBeGreaterThan(0);
      snapshotId = snap.id;
      // Still running, processes and all, after the freeze for the copy.
      expect(await sh('snap-src', 'cat /home/a.txt')).toBe('one');
      await sh('snap-src', 'echo two > /home/b.txt && echo more >> /home/a.txt');

      const list = await json<SnapshotView[]>(await p!.api('/v0/sandboxes/snap-src/snapshots'));
      expect(list.map((s) => s.id)).toEqual([snapshotId]);

      const forked = await post('/v0/sandboxes/snap-src/fork', {
        targetType: 'sandbox',
        targetName: 'snap-fork',
        snapshotId,
        envs: [{ name: 'FORKED', value: 'yes' }],
      });
      expect(forked.status, await forked.clone().text()).toBe(200);
      expect(await json(forked)).toEqual({ name: 'snap-fork', type: 'sandbox', snapshotId });
      const fork = await waitSandbox(
        p!,
        'snap-fork',
        (s) => ['DEPLOYED', 'FAILED'].includes(s.status),
        'fork up',
      );
      expect(fork.status, JSON.stringify(fork.events)).toBe('DEPLOYED');
      expect(fork.spec.volumes ?? []).toEqual([]);
      expect(await sh('snap-fork', 'cat /home/a.txt')).toBe('one');
      expect(await sh('snap-fork', 'test -e /home/b.txt && echo present || echo absent')).toBe('absent');
      expect(await sh('snap-fork', 'cat /data/v.txt')).toBe('vol');
      expect(await sh('snap-fork', 'test -e /etc/issue && echo present || echo absent')).toBe('absent');
      expect(await sh('snap-fork', 'hostname; echo $FORKED')).toBe('snap-fork\nyes');

      // No shared writable state: the fork's writes (its layer and the copied volume files) stay its own.
      await sh('snap-fork', 'echo fork > /home/c.txt && echo changed > /data/v.txt');
      expect(await sh('snap-src', 'test -e /home/c.txt && echo present || echo absent')).toBe('absent');
      expect(await sh('snap-src', 'cat /data/v.txt')).toBe('vol');
    }, 180_000);

    it('forks the live state (a snapshot is taken for it)', async () => {
      const res = await post('/v0/sandboxes/snap-src/fork', {
        targetType: 'sandbox',
        targetName: 'snap-live',
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const body = await json<{ snapshotId: string }>(res);
      expect(body.snapshotId).not.toBe(snapshotId);
      await waitSandbox(p!, 'snap-live', (s) => s.status === 'DEPLOYED', 'live fork up', 60_000);
      expect(await sh('snap-live', 'cat /home/a.txt /home/b.txt')).toBe('one\nmore\ntwo');
      // Refusals: a name in use, an application target, a snapshot that is not this sandbox's.
      const again = await post('/v0/sandboxes/snap-src/fork', {
        targetType: 'sandbox',
        targetName: 'snap-live',
      });
      expect(again.status).toBe(409);
      const app = await post('/v0/sandboxes/snap-src/fork', { targetType: 'application', targetName: 'x' });
      expect(app.status).toBe(400);
      expect(await app.text()).toContain('targetType');
      const foreign = await post('/v0/sandboxes/snap-live/fork', {
        targetType: 'sandbox',
        targetName: 'snap-x',
        snapshotId,
      });
      expect(foreign.status).toBe(404);
      expect((await getSandbox(p!, 'snap-src')).status).toBe('DEPLOYED');
    }, 180_000);

    it('hides snapshots from another workspace and deletes with 204', async () => {
      const created = await post('/v0/workspaces', { name: OTHER });
      expect(created.status, await created.clone().text()).toBe(200);
      const mine = p!.credentials.workspace;
      // The attack: the same caller scoped to another workspace reaches for this one's snapshot.
      expect((await p!.api(`/v0/sandboxes/snap-src/snapshots?workspace=${OTHER}`)).status).toBe(404);
      expect(
        (await p!.api(`/v0/snapshots/${snapshotId}?workspace=${OTHER}`, { method: 'DELETE' })).status,
      ).toBe(404);
      const fork = await p!.api(`/v0/sandboxes/snap-src/fork?workspace=${OTHER}`, {
        method: 'POST',
        body: JSON.stringify({ targetType: 'sandbox', targetName: 'stolen', snapshotId }),
      });
      expect(fork.status).toBe(404);

      // Our SDK: sandbox.snapshots create, list, delete by name.
      const client = new Tarmac({ apiUrl: p!.url, apiKey: p!.credentials.apiKey, workspace: mine });
      const sdkSandbox = await Sandbox.get('snap-src', client);
      const viaSdk = await sdkSandbox.snapshots.create('sdk-one');
      expect(viaSdk).toMatchObject({ name: 'sdk-one', status: 'ready', source: { name: 'snap-src' } });
      expect((await sdkSandbox.snapshots.list()).map((s) => s.name)).toContain('sdk-one');
      await sdkSandbox.snapshots.delete('sdk-one');
      expect((await sdkSandbox.snapshots.list()).map((s) => s.name)).not.toContain('sdk-one');

      // Bounded: ten snapshots per sandbox ('first' and the live fork's are two of them).
      const snapshot = () =>
        p!.api(`/v0/sandboxes/snap-src/snapshots?workspace=${mine}`, { method: 'POST', body: '{}' });
      for (let i = 0; i < 8; i++) expect((await snapshot()).status).toBe(200);
      const refused = await snapshot();
      expect(refused.status, await refused.clone().text()).toBe(409);

      const del = await p!.api(`/v0/snapshots/${snapshotId}?workspace=${mine}`, { method: 'DELETE' });
      expect(del.status).toBe(204);
      expect(await del.text()).toBe('');
      expect(
        (await p!.api(`/v0/snapshots/${snapshotId}?workspace=${mine}`, { method: 'DELETE' })).status,
      ).toBe(404);
      const left = await json<SnapshotView[]>(
        await p!.api(`/v0/sandboxes/snap-src/snapshots?workspace=${mine}`),
      );
      expect(left.map((s) => s.id)).not.toContain(snapshotId);
      // A deleted workspace's snapshots go from the disk too (their records cascade away).
      const theirs = await p!.api(`/v0/sandboxes?workspace=${OTHER}`, {
        method: 'POST',
        body: JSON.stringify({
          metadata: { name: 'theirs' },
          spec: { runtime: { image: 'blaxel/base-image:latest', memory: 256 } },
        }),
      });
      expect(theirs.status, await theirs.clone().text()).toBe(200);
      await waitFor(
        'their sandbox DEPLOYED',
        async () => {
          const s = await json<{ status: string }>(await p!.api(`/v0/sandboxes/theirs?workspace=${OTHER}`));
          return s.status === 'DEPLOYED' ? true : undefined;
        },
        60_000,
      );
      const theirSnap = await p!.api(`/v0/sandboxes/theirs/snapshots?workspace=${OTHER}`, {
        method: 'POST',
        body: '{}',
      });
      expect(theirSnap.status, await theirSnap.clone().text()).toBe(200);
      const theirId = (await json<SnapshotView>(theirSnap)).id;
      const onDisk = () => readdirSync(join(p!.home, 'snapshots'));
      expect(onDisk()).toContain(theirId);
      expect((await p!.api(`/v0/workspaces/${OTHER}`, { method: 'DELETE' })).status).toBe(200);
      await waitFor(
        'their snapshot swept',
        async () => (onDisk().includes(theirId) ? undefined : true),
        30_000,
      );
      expect(onDisk()).not.toContain(snapshotId); // deleted above

      // The fork made from it keeps running on its own copy.
      expect(await sh('snap-fork', 'cat /home/a.txt')).toBe('one');
    }, 60_000);
  },
);
