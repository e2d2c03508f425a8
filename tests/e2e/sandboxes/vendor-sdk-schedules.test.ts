// Issue 14 "What it must show": the vendor SDK (@blaxel/core 0.3.21, unmodified) against the
// platform for schedules (an `at` entry fires and its execution is listed), snapshots (the
// deprecated `sandbox.snapshot()`, `sandbox.snapshots.create/list/delete`) and `sandbox.fork`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningPlatform } from '../support/platform.js';
import {
  cleanUp,
  createSandbox,
  exec,
  missingCapability,
  startSandboxPlatform,
  waitFor,
  waitSandbox,
} from './support.js';

const missing = missingCapability();
const ENV = { TARMAC_BRIDGE: 'tarmacvsd0', TARMAC_SUBNET: '10.155.0.0/16' };

describe.skipIf(missing !== null)(
  `vendor SDK: schedules, snapshots, fork${missing ? ` (skipped: ${missing})` : ''}`,
  () => {
    let p: RunningPlatform | undefined;
    const names = ['vsdk', 'vsdk-fork'];
    // eslint-disable-next-line @typescript-eslint/consistent-type-imports -- loaded after its env is set
    let blaxel: typeof import('@blaxel/core');

    beforeAll(async () => {
      p = await startSandboxPlatform({ env: ENV });
      // The SDK reads its target from the environment when first used.
      process.env.BL_API_URL = `${p.url}/v0`;
      process.env.BL_RUN_URL = p.url;
      process.env.BL_API_KEY = p.credentials.apiKey;
      process.env.BL_WORKSPACE = p.credentials.workspace;
      process.env.BL_DISABLE_CONTROL_PLANE_H2 = 'true';
      process.env.BL_DISABLE_H2 = 'true';
      process.env.DO_NOT_TRACK = '1';
      blaxel = await import('@blaxel/core');
    }, 15 * 60_000);

    afterAll(() => cleanUp(p, names), 120_000);

    it('schedules an at entry that fires, and lists its execution', async () => {
      await createSandbox(p!, 'vsdk');
      const sandbox = await blaxel.SandboxInstance.get('vsdk');
      const created = await sandbox.schedules.create({
        type: 'at',
        value: new Date(Date.now() + 3000).toISOString(),
        input: { command: 'echo vendor > /tmp/vendor.txt', name: 'vendor' },
      });
      expect(created.id).toBeTruthy();
      expect((await sandbox.schedules.list()).data.map((e) => e.id)).toEqual([created.id]);
      const ex = await waitFor(
        'the execution',
        async () => (await sandbox.schedules.executions()).data.find((e) => e.scheduleId === created.id),
        30_000,
      );
      expect(ex.statusCode).toBe(200);
      expect(ex.processName?.startsWith('vendor-')).toBe(true);
      await waitFor(
        'the file',
        async () =>
          (await exec(p!, 'vsdk', 'cat /tmp/vendor.txt')).stdout?.trim() === 'vendor' ? true : undefined,
        15_000,
      );
      await sandbox.schedules.delete(created.id!);
      expect((await sandbox.schedules.list()).data).toEqual([]);
    }, 120_000);

    it('snapshots, forks from the snapshot, and deletes it', async () => {
      const sandbox = await blaxel.SandboxInstance.get('vsdk');
      await exec(p!, 'vsdk', 'echo kept > /home/kept.txt');
      const snap = await sandbox.snapshots.create('v1');
      expect(snap.status).toBe('ready');
      const old = (await sandbox.snapshot('v2')) as { id: string; status: string };
      expect(old.status).toBe('ready');
      expect((await sandbox.snapshots.list()).map((s) => s.name).sort()).toEqual(['v1', 'v2']);
      await exec(p!, 'vsdk', 'echo later > /home/later.txt');
      const fork = await sandbox.fork('vsdk-fork', { snapshotId: snap.id });
      expect(fork).toMatchObject({ name: 'vsdk-fork', type: 'sandbox', snapshotId: snap.id });
      await waitSandbox(p!, 'vsdk-fork', (s) => s.status === 'DEPLOYED', 'fork up', 60_000);
      expect((await exec(p!, 'vsdk-fork', 'cat /home/kept.txt; ls /home')).stdout?.trim()).toBe(
        'kept\nkept.txt',
      );
      await sandbox.snapshots.delete('v1');
      await sandbox.deleteSnapshot(old.id);
      expect(await sandbox.snapshots.list()).toEqual([]);
    }, 120_000);
  },
);
